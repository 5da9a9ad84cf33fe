//! Tests of the capacity-type sync's decision.

use super::*;
use crate::ports::Instance;

fn claim(name: &str, id: &str, capacity_type: &str, deleting: bool) -> NodeClaim {
    let mut meta = json!({"name": name, "labels": {
        CAPACITY_TYPE: capacity_type,
        "karpenter.k8s.aws/capacity-reservation-id": "cr-1",
    }});
    if deleting {
        meta["deletionTimestamp"] = json!("2026-01-01T00:00:00Z");
    }
    serde_json::from_value(json!({"apiVersion": "karpenter.sh/v1", "kind": "NodeClaim",
        "metadata": meta,
        "spec": {"nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass",
            "name": "default"}, "requirements": []},
        "status": {"providerID": format!("aws:///us-west-2a/{id}")}}))
    .unwrap()
}

fn node(name: &str, id: &str, capacity_type: &str, registered: bool) -> Node {
    serde_json::from_value(json!({"metadata": {"name": name, "labels": {
            CAPACITY_TYPE: capacity_type,
            REGISTERED: registered.to_string(),
        }},
        "spec": {"providerID": format!("aws:///us-west-2a/{id}")}}))
    .unwrap()
}

fn instance(id: &str, capacity_type: CapacityType) -> Instance {
    Instance {
        id: id.into(),
        provider_id: format!("aws:///us-west-2a/{id}"),
        instance_type: "p5.48xlarge".into(),
        zone: "us-west-2a".into(),
        state: "running".into(),
        capacity_type,
        launch_time: None,
        image_id: None,
        tags: BTreeMap::new(),
        private_dns_name: None,
        partition: None,
        capacity_reservation: (capacity_type == CapacityType::Reserved).then(|| "cr-1".into()),
        subnet_id: None,
        security_group_ids: Vec::new(),
    }
}

#[test]
fn a_reserved_claim_whose_instance_is_now_on_demand_is_demoted_with_its_node() {
    let claims = [
        claim("ended", "i-1", "reserved", false),
        claim("still", "i-2", "reserved", false),
        claim("going", "i-3", "reserved", true),
        claim("bought", "i-4", "on-demand", false),
        claim("unknown", "i-5", "reserved", false),
    ];
    let nodes = [
        node("n-1", "i-1", "reserved", true),
        node("n-2", "i-2", "reserved", true),
    ];
    let found = Instances::of(vec![
        instance("i-1", CapacityType::OnDemand),
        instance("i-2", CapacityType::Reserved),
        instance("i-3", CapacityType::OnDemand),
        instance("i-4", CapacityType::OnDemand),
    ]);
    assert_eq!(
        demotions(&claims, &nodes, &found),
        vec![Demotion {
            node_claim: "ended".into(),
            node: Some("n-1".into()),
        }],
        "only the live reserved claim whose instance EC2 reports on-demand"
    );
}

#[test]
fn an_unregistered_node_waits_and_a_node_left_behind_is_still_fixed() {
    let found = Instances::of(vec![instance("i-1", CapacityType::OnDemand)]);
    let claims = [claim("ended", "i-1", "reserved", false)];
    let unregistered = [node("n-1", "i-1", "reserved", false)];
    assert_eq!(
        demotions(&claims, &unregistered, &found),
        vec![Demotion {
            node_claim: "ended".into(),
            node: None,
        }]
    );
    // The claim was relabelled but patching its Node failed: the next pass fixes the Node.
    let claims = [claim("ended", "i-1", "on-demand", false)];
    let nodes = [node("n-1", "i-1", "reserved", true)];
    assert_eq!(
        demotions(&claims, &nodes, &found),
        vec![Demotion {
            node_claim: "ended".into(),
            node: Some("n-1".into()),
        }]
    );
}

#[test]
fn the_patch_sets_on_demand_and_removes_every_reservation_label() {
    let l = on_demand_labels();
    assert_eq!(l.get(CAPACITY_TYPE), Some(&Some("on-demand".to_string())));
    for k in RESERVATION_LABELS {
        assert_eq!(l.get(k), Some(&None), "{k} removed");
    }
    let patch = serde_json::to_value(&l).unwrap();
    assert_eq!(
        patch["karpenter.k8s.aws/capacity-reservation-id"],
        json!(null)
    );
}
