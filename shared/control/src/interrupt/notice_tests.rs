//! Tests of the interruption Events: Karpenter's reasons, types and messages on both objects.

use serde_json::json;

use super::*;
use crate::ports::HealthCategory;

fn claim() -> NodeClaim {
    serde_json::from_value(json!({"apiVersion": "karpenter.sh/v1", "kind": "NodeClaim",
        "metadata": {"name": "default-x", "uid": "uid-claim"},
        "spec": {"requirements": [],
            "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"}},
        "status": {"providerID": "aws:///a/i-1", "nodeName": "ip-10-0-0-1"}}))
    .unwrap()
}

fn node() -> Node {
    serde_json::from_value(
        json!({"metadata": {"name": "ip-10-0-0-1", "uid": "uid-node"},
        "spec": {"providerID": "aws:///a/i-1"}}),
    )
    .unwrap()
}

fn id() -> String {
    "i-1".into()
}

/// Every message kind, and the Event Karpenter records for it: reason, type, message.
fn karpenters() -> Vec<(Interruption, &'static str, EventType, &'static str)> {
    use EventType::{Normal, Warning};
    let unhealthy = "An unhealthy warning was triggered for the instance";
    vec![
        (
            Interruption::SpotInterrupted {
                instance_id: id(),
                action: None,
            },
            "SpotInterrupted",
            Warning,
            "Spot interruption warning was triggered",
        ),
        (
            Interruption::CapacityReservationInterrupted {
                instance_id: id(),
                action: None,
            },
            "CapacityReservationInstanceInterrupted",
            Warning,
            "Capacity Reservation interruption warning was triggered",
        ),
        (
            Interruption::RebalanceRecommendation { instance_id: id() },
            "SpotRebalanceRecommendation",
            Normal,
            "Spot rebalance recommendation was triggered",
        ),
        (
            Interruption::InstanceStopped {
                instance_id: id(),
                state: "stopping".into(),
            },
            "InstanceStopping",
            Warning,
            "Instance is stopping",
        ),
        (
            Interruption::InstanceTerminated {
                instance_id: id(),
                state: "shutting-down".into(),
            },
            "InstanceTerminating",
            Warning,
            "Instance is terminating",
        ),
        (
            Interruption::ScheduledChange {
                instance_ids: vec![id()],
                event_type_code: None,
            },
            "InstanceUnhealthy",
            Warning,
            unhealthy,
        ),
        (
            Interruption::InstanceUnhealthy {
                instance_id: id(),
                category: HealthCategory::SystemStatus,
            },
            "InstanceUnhealthy",
            Warning,
            unhealthy,
        ),
    ]
}

#[test]
fn every_interruption_is_an_event_on_the_nodeclaim_and_its_node_in_karpenters_words() {
    for (i, reason, type_, message) in karpenters() {
        let notice = Notice::of(&i).unwrap_or_else(|| panic!("{i:?} records an Event"));
        let events = notice.events(&claim(), Some(&node()));
        let got: Vec<(&str, &str, &str, &str, EventType, &str)> = events
            .iter()
            .map(|e| {
                let o = &e.involved;
                (
                    o.kind.as_str(),
                    o.name.as_str(),
                    o.uid.as_str(),
                    e.reason.as_str(),
                    e.type_,
                    e.message.as_str(),
                )
            })
            .collect();
        assert_eq!(
            got,
            [
                (
                    "NodeClaim",
                    "default-x",
                    "uid-claim",
                    reason,
                    type_,
                    message
                ),
                ("Node", "ip-10-0-0-1", "uid-node", reason, type_, message),
            ],
            "{i:?}"
        );
        assert_eq!(events[0].involved.api_version, "karpenter.sh/v1");
        assert_eq!(events[1].involved.api_version, "v1");
    }
    assert_eq!(Notice::of(&Interruption::NoOp), None);
}

#[test]
fn the_termination_it_starts_is_an_event_naming_each_object() {
    let events = Notice::TerminatingOnInterruption.events(&claim(), Some(&node()));
    let got: Vec<(&str, &str, EventType, &str)> = events
        .iter()
        .map(|e| {
            (
                e.involved.kind.as_str(),
                e.reason.as_str(),
                e.type_,
                e.message.as_str(),
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            (
                "NodeClaim",
                "TerminatingOnInterruption",
                EventType::Warning,
                "Interruption triggered termination for the NodeClaim"
            ),
            (
                "Node",
                "TerminatingOnInterruption",
                EventType::Warning,
                "Interruption triggered termination for the Node"
            ),
        ]
    );
}

#[test]
fn a_nodeclaim_without_a_node_gets_its_event_alone_and_repeats_fold() {
    let alone = Notice::SpotInterrupted.events(&claim(), None);
    assert_eq!(alone.len(), 1);
    assert_eq!(alone[0].involved.kind, "NodeClaim");
    let twice = [
        Notice::SpotInterrupted.events(&claim(), Some(&node())),
        Notice::SpotInterrupted.events(&claim(), Some(&node())),
        Notice::InstanceTerminating.events(&claim(), Some(&node())),
    ]
    .concat();
    let kept: Vec<(String, String)> = dedupe(twice)
        .into_iter()
        .map(|e| (e.involved.kind, e.reason.to_string()))
        .collect();
    assert_eq!(
        kept,
        [
            ("NodeClaim".into(), "SpotInterrupted".into()),
            ("Node".into(), "SpotInterrupted".into()),
            ("NodeClaim".into(), "InstanceTerminating".into()),
            ("Node".into(), "InstanceTerminating".into()),
        ]
    );
}
