//! Tests of orphan and lost-claim detection.

use super::*;
use jiff::SignedDuration;
use kerf_catalog::CapacityType;
use std::collections::BTreeMap;

fn t(m: i64) -> Timestamp {
    "2026-01-01T00:00:00Z".parse::<Timestamp>().unwrap() + SignedDuration::from_mins(m)
}

fn instance(id: &str, claim: Option<&str>, launched: i64, state: &str) -> Instance {
    let mut tags = BTreeMap::new();
    if let Some(c) = claim {
        tags.insert("karpenter.sh/nodeclaim".to_string(), c.to_string());
    }
    Instance {
        id: id.into(),
        provider_id: format!("aws:///a/{id}"),
        instance_type: "m5.large".into(),
        zone: "a".into(),
        state: state.into(),
        capacity_type: CapacityType::OnDemand,
        launch_time: Some(t(launched)),
        image_id: None,
        tags,
        private_dns_name: None,
        partition: None,
        capacity_reservation: None,
        subnet_id: None,
        security_group_ids: Vec::new(),
    }
}

fn claim(name: &str, pid: Option<&str>) -> NodeClaim {
    serde_json::from_value(json!({"apiVersion": "karpenter.sh/v1", "kind": "NodeClaim",
        "metadata": {"name": name},
        "spec": {"requirements": [], "nodeClassRef": {"group": "g", "kind": "k", "name": "n"}},
        "status": {"providerID": pid, "conditions": [{"type": "Launched", "status": "True",
            "lastTransitionTime": "2026-01-01T00:00:00Z", "reason": "Launched", "message": ""}]}}))
    .unwrap()
}

#[test]
fn orphans_are_old_unknown_live_instances() {
    let grace = SignedDuration::from_mins(2);
    let instances = vec![
        instance("i-known", None, 0, "running"),
        instance("i-tagged", Some("launching"), 0, "running"),
        instance("i-young", None, 9, "running"),
        instance("i-gone", None, 0, "shutting-down"),
        instance("i-orphan", Some("deleted-claim"), 0, "running"),
    ];
    let claims = vec![
        claim("known", Some("aws:///a/i-known")),
        claim("launching", None),
    ];
    let got: Vec<&str> = orphans(&instances, &claims, t(10), grace)
        .iter()
        .map(|i| i.id.as_str())
        .collect();
    assert_eq!(got, ["i-orphan"]);
}

#[test]
fn lost_claims_have_no_live_instance_and_no_ready_node() {
    let grace = SignedDuration::from_mins(2);
    let instances = vec![
        instance("i-1", None, 0, "running"),
        instance("i-2", None, 0, "terminated"),
    ];
    let claims = vec![
        claim("a", Some("aws:///a/i-1")),
        claim("b", Some("aws:///a/i-2")),
        claim("c", Some("aws:///a/i-3")),
    ];
    let ready: Node = serde_json::from_value(
        json!({"metadata": {"name": "n3"}, "spec": {"providerID": "aws:///a/i-3"},
        "status": {"conditions": [{"type": "Ready", "status": "True"}]}}),
    )
    .unwrap();
    let lost: Vec<&str> = lost_claims(&instances, &claims, &[ready], t(10), grace)
        .iter()
        .map(|c| claim::name(c))
        .collect();
    assert_eq!(lost, ["b"], "c's kubelet is still Ready");
    assert!(
        lost_claims(&instances, &claims, &[], t(1), grace).is_empty(),
        "within the grace period"
    );
}
