//! NodeOverlay status: Ready, or why not (it does not convert, or it is in conflict).

use super::*;
use serde_json::json;

fn overlay(name: &str, spec: serde_json::Value) -> NodeOverlay {
    serde_json::from_value(json!({
        "apiVersion": "karpenter.sh/v1alpha1", "kind": "NodeOverlay",
        "metadata": {"name": name}, "spec": spec
    }))
    .unwrap()
}

fn ready(s: &NodeOverlayStatus) -> &kerf_api::v1::Condition {
    s.conditions.iter().find(|c| c.type_ == "Ready").unwrap()
}

fn pool() -> NodePool {
    let it = kerf_catalog::InstanceType {
        name: "m.large".into(),
        labels: [(
            "node.kubernetes.io/instance-type".to_string(),
            "m.large".to_string(),
        )]
        .into(),
        capacity: Default::default(),
        overhead: Default::default(),
        allocatable: Default::default(),
        offerings: vec![kerf_catalog::Offering {
            zone: "za".into(),
            capacity_type: kerf_catalog::CapacityType::OnDemand,
            price: 0.1,
            available: true,
            partition: None,
            reservation: None,
        }],
        ebs_volume_limit: None,
    };
    NodePool {
        name: "default".into(),
        catalog: std::sync::Arc::new(kerf_catalog::Catalog {
            region: "r".into(),
            instance_types: vec![it],
        }),
        ..Default::default()
    }
}

#[test]
fn a_valid_overlay_without_conflict_is_ready() {
    let o = overlay("a", json!({"priceAdjustment": "-10%"}));
    let s = status(&o, &[], jiff::Timestamp::UNIX_EPOCH);
    assert_eq!(ready(&s).status, ConditionStatus::True);
}

#[test]
fn an_invalid_overlay_is_not_ready_and_says_why() {
    let o = overlay("bad", json!({"price": "1", "priceAdjustment": "+1"}));
    let s = status(&o, &[], jiff::Timestamp::UNIX_EPOCH);
    let r = ready(&s);
    assert_eq!(r.status, ConditionStatus::False);
    assert_eq!(r.reason, "ValidationFailed");
    assert!(r.message.contains("mutually exclusive"), "{}", r.message);
}

#[test]
fn the_later_of_two_conflicting_overlays_is_not_ready() {
    let overlays = [
        overlay("alpha", json!({"weight": 5, "price": "2"})),
        overlay("zeta", json!({"weight": 5, "price": "3"})),
        overlay("heavy", json!({"weight": 9, "price": "4"})),
    ];
    let conflicts = all_conflicts(&[pool()], &overlays);
    let t = jiff::Timestamp::UNIX_EPOCH;
    let r = |i: usize| ready(&status(&overlays[i], &conflicts, t)).clone();
    assert_eq!(r(0).status, ConditionStatus::True, "alpha applies");
    assert_eq!(r(1).status, ConditionStatus::False);
    assert_eq!(r(1).reason, "Conflict");
    assert!(r(1).message.contains("\"alpha\""), "{}", r(1).message);
    assert_eq!(
        r(2).status,
        ConditionStatus::True,
        "a heavier weight is no conflict"
    );
}
