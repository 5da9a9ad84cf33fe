use serde_json::json;

use super::*;

fn pool(template: serde_json::Value) -> karpenter::NodePool {
    serde_json::from_value(json!({
        "apiVersion": "karpenter.sh/v1", "kind": "NodePool",
        "metadata": {"name": "default"},
        "spec": {"template": template}
    }))
    .unwrap()
}

fn base() -> serde_json::Value {
    json!({
        "metadata": {"labels": {"team": "a"}},
        "spec": {
            "requirements": [{"key": "kubernetes.io/arch", "operator": "In", "values": ["amd64"]}],
            "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"},
            "taints": [{"key": "a", "effect": "NoSchedule"}, {"key": "b", "effect": "NoSchedule"}],
            "expireAfter": "720h"
        }
    })
}

#[test]
fn nodepool_hash_ignores_requirements_order_and_equal_durations() {
    let h = nodepool_hash(&pool(base()));
    assert!(h.parse::<u64>().is_ok(), "decimal: {h}");
    let mut t = base();
    t["spec"]["requirements"][0]["values"] = json!(["arm64"]);
    assert_eq!(nodepool_hash(&pool(t)), h, "requirements drift separately");
    let mut t = base();
    t["spec"]["taints"] =
        json!([{"key": "b", "effect": "NoSchedule"}, {"key": "a", "effect": "NoSchedule"}]);
    assert_eq!(nodepool_hash(&pool(t)), h, "taints are a set");
    let mut t = base();
    t["spec"]["expireAfter"] = json!("43200m");
    assert_eq!(nodepool_hash(&pool(t)), h, "durations compare by value");
}

#[test]
fn nodepool_hash_changes_with_the_template() {
    let h = nodepool_hash(&pool(base()));
    for (path, v) in [
        ("labels", json!({"team": "b"})),
        ("annotations", json!({"x": "y"})),
    ] {
        let mut t = base();
        t["metadata"][path] = v;
        assert_ne!(nodepool_hash(&pool(t)), h, "{path}");
    }
    let mut t = base();
    t["spec"]["expireAfter"] = json!("Never");
    assert_ne!(nodepool_hash(&pool(t)), h);
    let mut t = base();
    t["spec"]["terminationGracePeriod"] = json!("1h");
    assert_ne!(nodepool_hash(&pool(t)), h);
    let mut t = base();
    t["spec"]["nodeClassRef"]["name"] = json!("other");
    assert_ne!(nodepool_hash(&pool(t)), h);
}

fn class(spec: serde_json::Value) -> karpenter::EC2NodeClass {
    serde_json::from_value(json!({
        "apiVersion": "karpenter.k8s.aws/v1", "kind": "EC2NodeClass",
        "metadata": {"name": "default"},
        "spec": spec
    }))
    .unwrap()
}

fn class_spec() -> serde_json::Value {
    json!({
        "role": "KarpenterNodeRole",
        "amiSelectorTerms": [{"alias": "al2023@latest"}],
        "subnetSelectorTerms": [{"tags": {"k": "v"}}],
        "securityGroupSelectorTerms": [{"tags": {"k": "v"}}],
        "tags": {"team": "a"}
    })
}

#[test]
fn nodeclass_hash_ignores_selector_terms_but_not_launch_settings() {
    let h = nodeclass_hash(&class(class_spec()));
    let mut s = class_spec();
    s["subnetSelectorTerms"] = json!([{"id": "subnet-1"}]);
    s["amiSelectorTerms"] = json!([{"alias": "al2023@v20260101"}]);
    s["securityGroupSelectorTerms"] = json!([{"id": "sg-1"}]);
    assert_eq!(nodeclass_hash(&class(s)), h, "selectors drift dynamically");
    let mut s = class_spec();
    s["amiFamily"] = json!("AL2023");
    assert_eq!(
        nodeclass_hash(&class(s)),
        h,
        "the resolved family is the same"
    );
    let mut s = class_spec();
    s["tags"] = json!({"team": "b"});
    assert_ne!(nodeclass_hash(&class(s)), h);
    let mut s = class_spec();
    s["userData"] = json!("echo hi");
    assert_ne!(nodeclass_hash(&class(s)), h);
    let mut s = class_spec();
    s["amiSelectorTerms"] = json!([{"alias": "bottlerocket@latest"}]);
    assert_ne!(nodeclass_hash(&class(s)), h, "another family");
}

#[test]
fn the_placement_group_selector_is_part_of_the_nodeclass_hash() {
    let h = nodeclass_hash(&class(class_spec()));
    let with = |selector: serde_json::Value| {
        let mut s = class_spec();
        s["placementGroupSelector"] = selector;
        nodeclass_hash(&class(s))
    };
    let by_name = with(json!({"name": "kafka"}));
    assert_ne!(by_name, h, "a selector added");
    assert_ne!(with(json!({"name": "etcd"})), by_name, "another group");
    assert_ne!(with(json!({"id": "pg-0abc"})), by_name);
    assert_eq!(with(json!({"name": "kafka"})), by_name);
}

#[test]
fn network_interfaces_and_connection_tracking_are_part_of_the_nodeclass_hash() {
    let h = nodeclass_hash(&class(class_spec()));
    let with = |key: &str, v: serde_json::Value| {
        let mut s = class_spec();
        s[key] = v;
        nodeclass_hash(&class(s))
    };
    let primary = json!({"networkCardIndex": 0, "deviceIndex": 0, "interfaceType": "interface"});
    let efa = json!({"networkCardIndex": 1, "deviceIndex": 0, "interfaceType": "efa-only"});
    let listed = with("networkInterfaces", json!([primary, efa]));
    assert_ne!(listed, h, "interfaces added");
    assert_ne!(with("networkInterfaces", json!([primary])), listed);
    assert_eq!(
        with("networkInterfaces", json!([efa, primary])),
        listed,
        "a list hashes as a set"
    );
    let ct = with("connectionTracking", json!({"tcpEstablishedTimeout": 60}));
    assert_ne!(ct, h);
    assert_ne!(
        with("connectionTracking", json!({"tcpEstablishedTimeout": 120})),
        ct
    );
}
