//! NodePool status: counts, summed capacity and readiness from the node class.

use super::*;
use kerf_api::v1::{EC2NodeClassStatus, NodeClaimStatus};

fn pool(class: &str) -> NodePool {
    let mut p: NodePool = serde_json::from_value(json!({
        "apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": {"name": "default"},
        "spec": {"template": {"spec": {"requirements": [],
            "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": class}}}}
    }))
    .unwrap();
    p.status = None;
    p
}

fn claim(pool: &str, cpu: &str, memory: &str) -> NodeClaim {
    let mut c: NodeClaim = serde_json::from_value(json!({
        "apiVersion": "karpenter.sh/v1", "kind": "NodeClaim",
        "metadata": {"name": format!("{pool}-{cpu}"), "labels": {"karpenter.sh/nodepool": pool}},
        "spec": {"requirements": [], "nodeClassRef": {"group": "karpenter.k8s.aws",
            "kind": "EC2NodeClass", "name": "default"}}
    }))
    .unwrap();
    let mut capacity = BTreeMap::new();
    capacity.insert("cpu".to_string(), Quantity(cpu.into()));
    capacity.insert("memory".to_string(), Quantity(memory.into()));
    c.status = Some(NodeClaimStatus {
        capacity,
        ..NodeClaimStatus::default()
    });
    c
}

fn class(ready: bool) -> EC2NodeClass {
    let mut c: EC2NodeClass = serde_json::from_value(json!({
        "apiVersion": "karpenter.k8s.aws/v1", "kind": "EC2NodeClass",
        "metadata": {"name": "default", "generation": 3},
        "spec": {"role": "r", "amiSelectorTerms": [{"alias": "al2023@latest"}],
            "subnetSelectorTerms": [{"tags": {"a": "b"}}],
            "securityGroupSelectorTerms": [{"tags": {"a": "b"}}]}
    }))
    .unwrap();
    let s = if ready {
        ConditionStatus::True
    } else {
        ConditionStatus::False
    };
    c.status = Some(EC2NodeClassStatus {
        conditions: vec![condition("Ready", s, "Ready", "")],
        ..EC2NodeClassStatus::default()
    });
    c
}

fn find<'a>(s: &'a NodePoolStatus, t: &str) -> &'a Condition {
    s.conditions.iter().find(|c| c.type_ == t).unwrap()
}

#[test]
fn counts_the_pools_claims_and_sums_their_capacity() {
    let claims = [
        claim("default", "2", "4Gi"),
        claim("default", "1500m", "512Mi"),
        claim("other", "64", "256Gi"),
    ];
    let s = status(
        &pool("default"),
        &claims,
        &[class(true)],
        0.0,
        jiff::Timestamp::UNIX_EPOCH,
    );
    assert_eq!(s.nodes, Some(2));
    assert_eq!(s.resources["cpu"].0, "3500m");
    assert_eq!(s.resources["memory"].0, "4608Mi");
    assert_eq!(s.node_class_observed_generation, Some(3));
    assert_eq!(find(&s, "Ready").status, ConditionStatus::True);
    assert_eq!(
        find(&s, "ValidationSucceeded").status,
        ConditionStatus::True
    );
}

#[test]
fn a_missing_or_unready_class_makes_the_pool_not_ready() {
    let t = jiff::Timestamp::UNIX_EPOCH;
    let missing = status(&pool("gone"), &[], &[class(true)], 0.0, t);
    assert_eq!(missing.nodes, Some(0));
    assert!(missing.resources.is_empty());
    assert_eq!(find(&missing, "NodeClassReady").reason, "NodeClassNotFound");
    assert_eq!(find(&missing, "Ready").status, ConditionStatus::False);
    let unready = status(&pool("default"), &[], &[class(false)], 0.0, t);
    assert_eq!(find(&unready, "NodeClassReady").reason, "NodeClassNotReady");
    assert_eq!(find(&unready, "Ready").status, ConditionStatus::False);
}

#[test]
fn an_unchanged_status_keeps_its_transition_times() {
    let t0 = jiff::Timestamp::UNIX_EPOCH;
    let mut p = pool("default");
    p.status = Some(status(&p, &[], &[class(true)], 0.0, t0));
    let later = t0 + jiff::SignedDuration::from_hours(1);
    // Same inputs an hour later: equal, so refresh writes nothing.
    assert_eq!(p.status, Some(status(&p, &[], &[class(true)], 0.0, later)));
}

fn limited(value: &str) -> NodePool {
    let mut p = pool("default");
    p.metadata.annotations = Some(
        [(
            kerf_labels::MAX_COST_PER_HOUR.to_string(),
            value.to_string(),
        )]
        .into(),
    );
    p
}

#[test]
fn a_dollar_limit_shows_the_cost_against_it() {
    let t = jiff::Timestamp::UNIX_EPOCH;
    let under = status(&limited("25.00"), &[], &[class(true)], 12.345, t);
    let c = find(&under, COST_WITHIN_LIMIT);
    assert_eq!(c.status, ConditionStatus::True);
    assert_eq!(c.reason, "WithinLimit");
    assert_eq!(c.message, "$12.35/h of $25.00/h");
    assert_eq!(find(&under, "Ready").status, ConditionStatus::True);
    let full = status(&limited("25"), &[], &[class(true)], 25.0, t);
    let c = find(&full, COST_WITHIN_LIMIT);
    assert_eq!(c.status, ConditionStatus::False);
    assert_eq!(c.reason, "LimitReached");
    // A pool without the annotation has no such condition, and loses a stale one.
    let mut p = pool("default");
    p.status = Some(full);
    let none = status(&p, &[], &[class(true)], 25.0, t);
    assert!(none.conditions.iter().all(|c| c.type_ != COST_WITHIN_LIMIT));
}

#[test]
fn a_bad_dollar_limit_fails_validation_and_readiness() {
    let t = jiff::Timestamp::UNIX_EPOCH;
    let s = status(&limited("25,00"), &[], &[class(true)], 1.0, t);
    let v = find(&s, "ValidationSucceeded");
    assert_eq!(v.status, ConditionStatus::False);
    assert_eq!(v.reason, "InvalidCostLimit");
    assert!(
        v.message.contains("NodePool \"default\"")
            && v.message.contains("kerf.dev/max-cost-per-hour")
            && v.message.contains("is not a number"),
        "{}",
        v.message
    );
    let r = find(&s, "Ready");
    assert_eq!(r.status, ConditionStatus::False);
    assert_eq!(r.message, "ValidationSucceeded=False");
    assert!(s.conditions.iter().all(|c| c.type_ != COST_WITHIN_LIMIT));
}
