//! Node repair's decision: policies and tolerations, the 20% guard per NodePool (and per
//! cluster for claims without a pool), deleting claims, and the next deadline.

use std::collections::BTreeMap;

use super::*;
use crate::ports::Snapshot;
use serde_json::json;

fn t(mins: i64) -> Timestamp {
    Timestamp::UNIX_EPOCH + SignedDuration::from_mins(mins)
}

/// Node `n<i>` of `pool` with `conds` as `(type, status, since minute)`.
fn node(i: usize, pool: &str, conds: &[(&str, &str, i64)]) -> Node {
    let conditions: Vec<_> = conds
        .iter()
        .map(|(ty, st, since)| {
            json!({"type": ty, "status": st, "lastTransitionTime": claim::rfc3339(t(*since))})
        })
        .collect();
    let mut labels = json!({});
    if !pool.is_empty() {
        labels = json!({"karpenter.sh/nodepool": pool});
    }
    serde_json::from_value(json!({
        "metadata": {"name": format!("n{i}"), "labels": labels},
        "spec": {"providerID": format!("aws:///za/i-{i}")},
        "status": {"conditions": conditions}
    }))
    .unwrap()
}

fn claim_of(i: usize, pool: &str) -> NodeClaim {
    let mut labels = json!({});
    if !pool.is_empty() {
        labels = json!({"karpenter.sh/nodepool": pool});
    }
    serde_json::from_value(json!({
        "apiVersion": "karpenter.sh/v1", "kind": "NodeClaim",
        "metadata": {"name": format!("c{i}"), "labels": labels},
        "spec": {"nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"},
                 "requirements": []},
        "status": {"providerID": format!("aws:///za/i-{i}")}
    }))
    .unwrap()
}

fn view(nodes: Vec<Node>, claims: Vec<NodeClaim>) -> View {
    View {
        snap: Snapshot {
            nodes,
            node_claims: claims,
            ..Snapshot::default()
        },
        marks: Default::default(),
        classes: BTreeMap::new(),
        catalogs: BTreeMap::new(),
        unloaded: BTreeMap::new(),
        now: t(0),
    }
}

const READY: (&str, &str, i64) = ("Ready", "True", 0);

/// A pool of `n` nodes whose first `bad` have been NotReady since minute 0.
fn pool(n: usize, bad: usize) -> View {
    let nodes = (0..n)
        .map(|i| {
            let cond = if i < bad {
                ("Ready", "False", 0)
            } else {
                READY
            };
            node(i, "default", &[cond])
        })
        .collect();
    let claims = (0..n).map(|i| claim_of(i, "default")).collect();
    view(nodes, claims)
}

fn names(rs: &[Repair]) -> Vec<&str> {
    rs.iter().map(|r| r.node_claim.as_str()).collect()
}

#[test]
fn the_condition_whose_toleration_ends_first_decides() {
    let n = node(
        0,
        "p",
        &[
            ("Ready", "False", 0),
            ("AcceleratedHardwareReady", "False", 5),
        ],
    );
    let u = unhealthy(&n).unwrap();
    assert_eq!(u.condition, "AcceleratedHardwareReady");
    assert_eq!(u.due, t(15), "10 minutes after minute 5, before Ready's 30");
    assert_eq!(unhealthy(&node(1, "p", &[READY])), None);
    let unknown = node(2, "p", &[("Ready", "Unknown", 3)]);
    assert_eq!(unhealthy(&unknown).unwrap().due, t(33));
    let other = node(3, "p", &[("MemoryPressure", "True", 0)]);
    assert_eq!(unhealthy(&other), None, "no policy for it");
}

#[test]
fn a_node_is_repaired_only_once_its_toleration_has_run_out() {
    let v = pool(10, 1);
    let early = decide(&v, t(29));
    assert!(early.repair.is_empty() && early.blocked.is_empty());
    assert_eq!(early.next, Some((t(30), vec!["c0".to_string()])));
    let due = decide(&v, t(30));
    assert_eq!(names(&due.repair), ["c0"]);
    assert_eq!(due.repair[0].condition, "Ready");
    assert_eq!(due.repair[0].node, "n0");
    assert_eq!(due.repair[0].pool, "default");
    assert_eq!(due.next, None);
}

#[test]
fn more_than_twenty_percent_unhealthy_blocks_the_pools_repairs() {
    // 20% of 10 is 2: two unhealthy nodes may be repaired, three may not.
    assert_eq!(names(&decide(&pool(10, 2), t(30)).repair), ["c0", "c1"]);
    let three = decide(&pool(10, 3), t(30));
    assert!(three.repair.is_empty());
    assert_eq!(names(&three.blocked), ["c0", "c1", "c2"]);
    // Rounded up: one of three nodes (33%) is still within 20% of 3 → 1.
    assert_eq!(names(&decide(&pool(3, 1), t(30)).repair), ["c0"]);
    assert!(decide(&pool(3, 2), t(30)).repair.is_empty());
}

#[test]
fn each_pool_is_guarded_by_its_own_nodes_and_poolless_claims_by_the_cluster() {
    let mut nodes = vec![node(0, "a", &[("Ready", "False", 0)])];
    nodes.extend((1..5).map(|i| node(i, "a", &[READY])));
    nodes.push(node(5, "b", &[("Ready", "False", 0)]));
    nodes.push(node(6, "b", &[("Ready", "False", 0)]));
    nodes.push(node(7, "", &[("KernelReady", "False", 0)]));
    let claims = vec![
        claim_of(0, "a"),
        claim_of(5, "b"),
        claim_of(6, "b"),
        claim_of(7, ""),
    ];
    let d = decide(&view(nodes, claims), t(60));
    assert_eq!(names(&d.repair), ["c0"], "pool a: 1 of 5");
    // Pool b: 2 of 2 unhealthy; the cluster: 4 of 8 (> 2) — both blocked.
    assert_eq!(names(&d.blocked), ["c5", "c6", "c7"]);
}

#[test]
fn nodes_without_a_claim_are_not_kerfs_to_repair() {
    let v = view(vec![node(0, "default", &[("Ready", "False", 0)])], vec![]);
    assert_eq!(decide(&v, t(60)), Decision::default());
}

#[test]
fn a_deleting_claim_is_marked_deleting_so_only_its_deadline_moves() {
    let mut v = pool(10, 1);
    v.snap.node_claims[0].metadata.deletion_timestamp =
        Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(t(31)));
    let d = decide(&v, t(40));
    assert!(d.repair[0].deleting);
}

#[test]
fn metric_labels_are_snake_case() {
    assert_eq!(
        snake_case("AcceleratedHardwareReady"),
        "accelerated_hardware_ready"
    );
    assert_eq!(snake_case("Ready"), "ready");
}
