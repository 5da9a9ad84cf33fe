//! Tests of the registration change.

use super::*;
use crate::register::partition;
use serde_json::json;

fn claim() -> NodeClaim {
    serde_json::from_value(json!({"apiVersion": "karpenter.sh/v1", "kind": "NodeClaim",
        "metadata": {"name": "default-x", "uid": "uid-1",
            "labels": {"karpenter.sh/nodepool": "default", "team": "a", "node.kubernetes.io/instance-type": "m5.large"},
            "annotations": {"note": "x"}},
        "spec": {"requirements": [],
            "taints": [{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}],
            "startupTaints": [{"key": "cilium.io/agent-not-ready", "effect": "NoExecute"}],
            "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"}},
        "status": {"providerID": "aws:///a/i-1"}}))
    .unwrap()
}

fn node(extra_labels: serde_json::Value) -> Node {
    serde_json::from_value(
        json!({"metadata": {"name": "ip-10-0-0-1", "labels": extra_labels},
        "spec": {"providerID": "aws:///a/i-1",
            "taints": [{"key": "karpenter.sh/unregistered", "effect": "NoExecute"},
                       {"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}]}}),
    )
    .unwrap()
}

#[test]
fn registration_syncs_labels_taints_finalizer_and_owner() {
    let n = registered_node(&node(json!({"kubernetes.io/os": "linux"})), &claim());
    let labels = n.metadata.labels.clone().unwrap();
    assert_eq!(labels["karpenter.sh/registered"], "true");
    assert_eq!(labels["karpenter.sh/nodepool"], "default");
    assert_eq!(labels["team"], "a");
    assert_eq!(labels["kubernetes.io/os"], "linux", "kubelet labels kept");
    assert_eq!(labels["karpenter.k8s.aws/ec2nodeclass"], "default");
    assert_eq!(n.metadata.annotations.clone().unwrap()["note"], "x");
    assert_eq!(
        n.metadata.finalizers.clone().unwrap(),
        ["karpenter.sh/termination"]
    );
    let owner = &n.metadata.owner_references.clone().unwrap()[0];
    assert_eq!(
        (owner.kind.as_str(), owner.name.as_str(), owner.uid.as_str()),
        ("NodeClaim", "default-x", "uid-1")
    );
    let taints = taint_keys(n);
    assert_eq!(
        taints,
        ["dedicated", "cilium.io/agent-not-ready"],
        "unregistered gone, no duplicate"
    );
    assert!(is_registered(&registered_node(&node(json!({})), &claim())));
    assert!(!is_registered(&node(json!({}))));
}

#[test]
fn registration_is_idempotent_and_respects_do_not_sync_taints() {
    let once = registered_node(&node(json!({})), &claim());
    assert_eq!(registered_node(&once, &claim()), once);
    let n = registered_node(
        &node(json!({"karpenter.sh/do-not-sync-taints": "true"})),
        &claim(),
    );
    let taints = taint_keys(n);
    assert_eq!(taints, ["dedicated"], "only the unregistered taint removed");
}

#[test]
fn registered_status_names_the_node() {
    let now = "2026-01-01T00:00:00Z".parse().unwrap();
    let s = registered_status(&claim(), "ip-10-0-0-1", now);
    assert_eq!(s.node_name.as_deref(), Some("ip-10-0-0-1"));
    assert!(kerf_api::v1::common::is_condition_true(
        &s.conditions,
        "Registered"
    ));
    assert_eq!(s.provider_id.as_deref(), Some("aws:///a/i-1"));
    assert!(claim_for(&[claim()], "aws:///a/i-1").is_some());
    assert!(claim_for(&[claim()], "aws:///a/i-2").is_none());
}

#[test]
fn only_a_claim_in_a_group_with_an_empty_partition_waits_for_one() {
    let with = |labels: &[(&str, &str)]| {
        let mut c = claim();
        let l = c.metadata.labels.get_or_insert_with(BTreeMap::new);
        for (k, v) in labels {
            l.insert(k.to_string(), v.to_string());
        }
        c
    };
    let pg = crate::names::PLACEMENT_GROUP_ID;
    let part = crate::names::PLACEMENT_GROUP_PARTITION;
    assert!(partition::needs_partition(&with(&[
        (pg, "pg-1"),
        (part, "")
    ])));
    assert!(!partition::needs_partition(&with(&[
        (pg, "pg-1"),
        (part, "2")
    ])));
    assert!(
        !partition::needs_partition(&with(&[(pg, "pg-1")])),
        "not a partition group"
    );
    assert!(!partition::needs_partition(&claim()));
    let n = registered_node(&node(json!({})), &with(&[(pg, "pg-1"), (part, "3")]));
    assert_eq!(
        n.metadata.labels.unwrap()[part],
        "3",
        "the node gets the claim's partition"
    );
}

/// The keys of a Node's taints, in order.
fn taint_keys(n: Node) -> Vec<String> {
    n.spec
        .and_then(|s| s.taints)
        .unwrap_or_default()
        .iter()
        .map(|t| t.key.clone())
        .collect()
}
