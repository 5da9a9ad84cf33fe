//! Tests of NodeClaim construction and condition merging.

use super::*;
use serde_json::json;

fn pool() -> NodePool {
    serde_json::from_value(json!({"apiVersion": "karpenter.sh/v1", "kind": "NodePool",
        "metadata": {"name": "default", "uid": "u-1"},
        "spec": {"template": {
            "metadata": {"labels": {"team": "a"}, "annotations": {"note": "x"}},
            "spec": {"requirements": [], "taints": [{"key": "gpu", "effect": "NoSchedule"}],
                "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"},
                "expireAfter": "24h"}}}}))
    .unwrap()
}

fn launch() -> Launch {
    Launch {
        node_claim: "default-abcde".into(),
        node_pool: "default".into(),
        instance_type: "m5.large".into(),
        capacity_type: kerf_catalog::CapacityType::OnDemand,
        zone: "us-west-2a".into(),
        price: 0.096,
        instance_type_options: vec!["m5.large".into()],
        requirements: serde_json::from_value(json!([
            {"key": "karpenter.sh/nodepool", "operator": "In", "values": ["default"]},
            {"key": "node.kubernetes.io/instance-type", "operator": "In", "values": ["m5.large", "c5.large"]},
            {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["on-demand"], "minValues": 1}
        ]))
        .unwrap(),
        pods: vec!["default/a".into()],
        requests: BTreeMap::from([("cpu".into(), "1500m".into()), ("pods".into(), "3".into())]),
        min_values_relaxed: false,
    }
}

#[test]
fn a_claim_whose_min_values_were_relaxed_says_so() {
    let strict = new_claim(&pool(), None, &launch());
    let annotations = strict.metadata.annotations.unwrap();
    assert!(!annotations.contains_key("karpenter.sh/nodeclaim-min-values-relaxed"));
    let relaxed = Launch {
        min_values_relaxed: true,
        ..launch()
    };
    let c = new_claim(&pool(), None, &relaxed);
    let annotations = c.metadata.annotations.unwrap();
    assert_eq!(
        annotations["karpenter.sh/nodeclaim-min-values-relaxed"],
        "true"
    );
}

#[test]
fn claim_carries_the_pool_template_and_the_launch() {
    let c = new_claim(&pool(), None, &launch());
    assert_eq!(c.metadata.generate_name.as_deref(), Some("default-"));
    assert_eq!(c.metadata.name, None);
    let labels = c.metadata.labels.clone().unwrap();
    assert_eq!(labels["team"], "a");
    assert_eq!(labels[NODEPOOL], "default");
    let annotations = c.metadata.annotations.clone().unwrap();
    assert_eq!(annotations["note"], "x");
    assert_eq!(
        annotations["karpenter.sh/nodepool-hash"],
        kerf_convert::hash::nodepool_hash(&pool())
    );
    assert_eq!(annotations["karpenter.sh/nodepool-hash-version"], "kerf-v1");
    assert_eq!(c.spec.taints.len(), 1);
    assert_eq!(c.spec.expire_after, "24h");
    let keys: Vec<&str> = c.spec.requirements.iter().map(|r| r.key.as_str()).collect();
    assert_eq!(
        keys,
        [
            "karpenter.sh/nodepool",
            "node.kubernetes.io/instance-type",
            "karpenter.sh/capacity-type"
        ],
        "the pool requirement once, first"
    );
    assert_eq!(c.spec.requirements[2].min_values, Some(1));
    assert_eq!(c.spec.resources.requests["cpu"].0, "1500m");
}

#[test]
fn conditions_keep_transition_times_and_derive_ready() {
    let t0: Timestamp = "2026-01-01T00:00:00Z".parse().unwrap();
    let t1 = t0 + jiff::SignedDuration::from_secs(60);
    let launched = condition(conditions::LAUNCHED, ConditionStatus::True, "Launched", "");
    let c0 = merge_conditions(&[], std::slice::from_ref(&launched), t0);
    let ready = c0.iter().find(|c| c.type_ == "Ready").unwrap();
    assert_eq!(ready.status, ConditionStatus::Unknown);
    assert_eq!(ready.message, "Registered=Unknown");
    let c1 = merge_conditions(
        &c0,
        &[
            launched.clone(),
            condition(
                conditions::REGISTERED,
                ConditionStatus::True,
                "Registered",
                "",
            ),
            condition(
                conditions::INITIALIZED,
                ConditionStatus::True,
                "Initialized",
                "",
            ),
        ],
        t1,
    );
    let get = |t: &str| c1.iter().find(|c| c.type_ == t).unwrap();
    assert_eq!(get("Launched").last_transition_time, "2026-01-01T00:00:00Z");
    assert_eq!(
        get("Registered").last_transition_time,
        "2026-01-01T00:01:00Z"
    );
    assert_eq!(get("Ready").status, ConditionStatus::True);
    assert_eq!(get("Ready").last_transition_time, "2026-01-01T00:01:00Z");
}
