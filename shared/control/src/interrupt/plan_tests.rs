//! Tests of a batch's plan: Events on both objects, marks, and who is evacuated.

use serde_json::json;

use super::*;

fn claim(name: &str, instance: &str, capacity_type: &str, deleting: bool) -> NodeClaim {
    let mut c: NodeClaim = serde_json::from_value(json!({"apiVersion": "karpenter.sh/v1", "kind": "NodeClaim",
        "metadata": {"name": name, "uid": format!("uid-{name}"),
            "labels": {"karpenter.sh/nodepool": "default", "karpenter.sh/capacity-type": capacity_type,
                "node.kubernetes.io/instance-type": "m5.large", "topology.kubernetes.io/zone": "us-west-2a"}},
        "spec": {"requirements": [],
            "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"}},
        "status": {"providerID": format!("aws:///us-west-2a/{instance}"), "nodeName": format!("ip-{name}")}}))
    .unwrap();
    if deleting {
        c.metadata.deletion_timestamp = Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(
            "2027-01-01T00:00:00Z".parse().unwrap(),
        ));
    }
    c
}

fn node(name: &str, instance: &str) -> Node {
    serde_json::from_value(
        json!({"metadata": {"name": format!("ip-{name}"), "uid": format!("uid-ip-{name}")},
        "spec": {"providerID": format!("aws:///us-west-2a/{instance}")}}),
    )
    .unwrap()
}

fn snapshot() -> Snapshot {
    Snapshot {
        node_claims: vec![
            claim("spot", "i-1", "spot", false),
            claim("going", "i-2", "spot", true),
            claim("booting", "i-3", "on-demand", false),
        ],
        nodes: vec![node("spot", "i-1"), node("going", "i-2")],
        ..Snapshot::default()
    }
}

fn spot(instance: &str) -> Interruption {
    Interruption::SpotInterrupted {
        instance_id: instance.into(),
        action: None,
    }
}

/// `(object kind, object name, reason)` of each Event.
fn recorded(events: &[EventSpec]) -> Vec<(String, String, String)> {
    events
        .iter()
        .map(|e| {
            let o = &e.involved;
            (o.kind.clone(), o.name.clone(), e.reason.to_string())
        })
        .collect()
}

/// The batch's plan against the test snapshot, with no metrics and the default options.
fn plan_of(work: &[(&str, Interruption)]) -> Plan {
    Plan::of(
        &snapshot(),
        &Metrics::default(),
        work,
        &InterruptOptions::default(),
    )
}

fn row(kind: &str, name: &str, reason: &str) -> (String, String, String) {
    (kind.into(), name.into(), reason.into())
}

#[test]
fn a_spot_warning_records_its_events_on_both_objects_once_and_evacuates() {
    let work = [("m1", spot("i-1")), ("m1-again", spot("i-1"))];
    let plan = plan_of(&work);
    assert_eq!(
        recorded(&plan.events),
        [
            row("NodeClaim", "spot", "SpotInterrupted"),
            row("Node", "ip-spot", "SpotInterrupted")
        ]
    );
    assert_eq!(plan.evacuate["spot"], ["m1", "m1-again"]);
    assert_eq!(plan.kinds["spot"], "spot_interrupted");
    assert_eq!(
        recorded(&plan.on_termination["spot"]),
        [
            row("NodeClaim", "spot", "TerminatingOnInterruption"),
            row("Node", "ip-spot", "TerminatingOnInterruption")
        ]
    );
}

#[test]
fn a_nodeclaim_already_deleting_gets_its_events_and_marks_but_no_second_deletion() {
    let work = [("m2", spot("i-2"))];
    let plan = plan_of(&work);
    assert_eq!(
        recorded(&plan.events),
        [
            row("NodeClaim", "going", "SpotInterrupted"),
            row("Node", "ip-going", "SpotInterrupted")
        ]
    );
    assert_eq!(
        plan.reclaimed,
        [OfferingKey::new(
            CapacityType::Spot,
            "m5.large",
            "us-west-2a"
        )]
    );
    assert!(plan.evacuate.is_empty());
}

#[test]
fn a_rebalance_recommendation_is_only_events_and_a_nodeclaim_without_node_gets_its_own() {
    let work = [
        (
            "m3",
            Interruption::RebalanceRecommendation {
                instance_id: "i-1".into(),
            },
        ),
        (
            "m4",
            Interruption::InstanceStopped {
                instance_id: "i-3".into(),
                state: "stopping".into(),
            },
        ),
        ("m5", spot("i-0000000000dead")),
    ];
    let plan = plan_of(&work);
    assert_eq!(
        recorded(&plan.events),
        [
            row("NodeClaim", "spot", "SpotRebalanceRecommendation"),
            row("Node", "ip-spot", "SpotRebalanceRecommendation"),
            row("NodeClaim", "booting", "InstanceStopping"),
        ]
    );
    assert_eq!(plan.evacuate.keys().collect::<Vec<_>>(), ["booting"]);
}

#[test]
fn a_capacity_reservation_interruption_marks_the_reserved_offering() {
    let work = [
        (
            "m6",
            Interruption::CapacityReservationInterrupted {
                instance_id: "i-3".into(),
                action: None,
            },
        ),
        (
            "m7",
            Interruption::InstanceTerminated {
                instance_id: "i-1".into(),
                state: "shutting-down".into(),
            },
        ),
    ];
    let plan = plan_of(&work);
    assert_eq!(
        plan.reclaimed,
        [OfferingKey::new(
            CapacityType::Reserved,
            "m5.large",
            "us-west-2a"
        )],
        "the reservation's offering, not the on-demand one the NodeClaim is labelled with; a \
         terminating instance marks nothing"
    );
    assert_eq!(
        plan.evacuate.keys().collect::<Vec<_>>(),
        ["booting", "spot"]
    );
    assert_eq!(plan.kinds["booting"], "capacity_reservation_interrupted");
}

#[test]
fn a_capacity_reservation_interruption_marks_only_the_nodes_reservation() {
    let mut reserved = claim("gpu", "i-9", "reserved", false);
    reserved.metadata.labels.get_or_insert_default().insert(
        kerf_labels::aws::CAPACITY_RESERVATION_ID.into(),
        "cr-0abc".into(),
    );
    let snap = Snapshot {
        node_claims: vec![reserved],
        ..Snapshot::default()
    };
    let work = [(
        "m9",
        Interruption::CapacityReservationInterrupted {
            instance_id: "i-9".into(),
            action: None,
        },
    )];
    let plan = Plan::of(
        &snap,
        &Metrics::default(),
        &work,
        &InterruptOptions::default(),
    );
    assert_eq!(
        plan.reclaimed,
        [
            OfferingKey::new(CapacityType::Reserved, "m5.large", "us-west-2a")
                .in_reservation(Some("cr-0abc"))
        ]
    );
    assert_eq!(
        plan.reclaimed[0].data_key(),
        "reserved_m5.large_us-west-2a_cr-0abc"
    );
}
