//! What a Karpenter user sees of an interruption: Karpenter's Events on the NodeClaim and its
//! Node (each once per object and reason, repeats counted), the deletion logged and counted
//! as an interruption; a capacity-reservation interruption's reserved offering marked
//! unavailable; an event inside an SNS notification handled, and queue messages that
//! are no events at all dropped without a parse warning.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers outside #[test] fns

use k8s_openapi::api::core::v1::{ConfigMap, Event};
use kerf_control::interrupt::InterruptOptions;
use kerf_e2e::events::interruption as handle;
use kerf_e2e::world::claims;
use kerf_sim::world::{KERF_NAMESPACE, World};
use kube::api::{Api, ListParams};
use serde_json::{Value, json};

use super::{batch, instance_of, spot_cluster, spot_warning};

/// `(involved kind, reason, type, message, count)` of the Events on object `name`.
async fn events_on(w: &World, name: &str) -> Vec<(String, String, String, String, i32)> {
    let events: Api<Event> = Api::all(w.client.clone());
    let mut out: Vec<_> = events
        .list(&ListParams::default())
        .await
        .unwrap()
        .items
        .into_iter()
        .filter(|e| e.involved_object.name.as_deref() == Some(name))
        .map(|e| {
            let o = e.involved_object;
            let s = |x: Option<String>| x.unwrap_or_default();
            (
                s(o.kind),
                s(e.reason),
                s(e.type_),
                s(e.message),
                e.count.unwrap_or(1),
            )
        })
        .collect();
    out.sort();
    out
}

/// The cluster's first NodeClaim, its name and its node's name.
async fn first_claim(w: &World) -> (kerf_api::v1::NodeClaim, String, String) {
    let victim = claims(&w.client).await[0].clone();
    let name = victim.metadata.name.clone().unwrap();
    let node = victim
        .status
        .as_ref()
        .and_then(|s| s.node_name.clone())
        .unwrap();
    (victim, name, node)
}

fn ev(
    kind: &str,
    reason: &str,
    type_: &str,
    message: &str,
    count: i32,
) -> (String, String, String, String, i32) {
    (
        kind.into(),
        reason.into(),
        type_.into(),
        message.into(),
        count,
    )
}

#[tokio::test]
async fn a_spot_warning_is_recorded_on_the_node_and_the_nodeclaim_and_logged_as_an_interruption() {
    let w = spot_cluster().await;
    let (victim, name, node) = first_claim(&w).await;
    let event = batch(&[("m1", spot_warning(&instance_of(&victim)))]);
    let opts = InterruptOptions::default();
    let r = handle(&w.provisioner, &w.termination_queue, &event, &opts).await;
    assert_eq!(r["batchItemFailures"], json!([]));
    // Delivered again while the NodeClaim is deleting: the same Events, counted twice.
    let again = handle(&w.provisioner, &w.termination_queue, &event, &opts).await;
    assert_eq!(again["batchItemFailures"], json!([]));

    let warned = "Spot interruption warning was triggered";
    assert_eq!(
        events_on(&w, &name).await,
        [
            ev("NodeClaim", "SpotInterrupted", "Warning", warned, 2),
            ev(
                "NodeClaim",
                "TerminatingOnInterruption",
                "Warning",
                "Interruption triggered termination for the NodeClaim",
                1
            ),
        ]
    );
    assert_eq!(
        events_on(&w, &node).await,
        [
            ev("Node", "SpotInterrupted", "Warning", warned, 2),
            ev(
                "Node",
                "TerminatingOnInterruption",
                "Warning",
                "Interruption triggered termination for the Node",
                1
            ),
        ]
    );
    let logs = w.logs.entries();
    let deleted: Vec<&Value> = logs
        .iter()
        .filter(|x| {
            x["NodeClaim"]["name"] == name.as_str()
                && x["message"].as_str().is_some_and(|m| m.contains("delete"))
        })
        .collect();
    assert_eq!(deleted.len(), 1, "one deletion line: {deleted:?}");
    assert_eq!(deleted[0]["controller"], "interruption");
    assert_eq!(
        deleted[0]["message"],
        "initiating delete from interruption message"
    );
    assert!(
        logs.iter()
            .any(|x| x.get("karpenter_nodeclaims_disrupted_total").is_some()
                && x["reason"] == "spot_interrupted"),
        "counted under the message kind"
    );
}

#[tokio::test]
async fn a_rebalance_recommendation_inside_an_sns_notification_is_recorded_and_no_ops_stay_quiet() {
    let w = spot_cluster().await;
    let (victim, name, node) = first_claim(&w).await;
    let rebalance = json!({"version": "0", "id": "r-1", "detail-type": "EC2 Instance Rebalance Recommendation",
        "source": "aws.ec2", "time": "2027-01-01T00:05:00Z", "region": "us-west-2", "resources": [],
        "detail": {"instance-id": instance_of(&victim)}});
    let sns = |message: String| {
        json!({"Type": "Notification", "MessageId": "5b2c",
        "TopicArn": "arn:aws:sns:us-west-2:123456789012:interruptions", "Message": message})
        .to_string()
    };
    let hook_test = json!({"AccountId": "123456789012", "Service": "AWS Auto Scaling",
        "Event": "autoscaling:TEST_NOTIFICATION", "AutoScalingGroupName": "my-asg"});
    let event = batch(&[
        ("rebalance", sns(rebalance.to_string())),
        ("sns-hook-test", sns(hook_test.to_string())),
        ("hook-test", hook_test.to_string()),
    ]);
    let r = handle(
        &w.provisioner,
        &w.termination_queue,
        &event,
        &InterruptOptions::default(),
    )
    .await;
    assert_eq!(r["batchItemFailures"], json!([]));

    let recommended = "Spot rebalance recommendation was triggered";
    assert_eq!(
        events_on(&w, &name).await,
        [ev(
            "NodeClaim",
            "SpotRebalanceRecommendation",
            "Normal",
            recommended,
            1
        )]
    );
    assert_eq!(
        events_on(&w, &node).await,
        [ev(
            "Node",
            "SpotRebalanceRecommendation",
            "Normal",
            recommended,
            1
        )]
    );
    let logs = w.logs.entries();
    let parse_warnings = logs
        .iter()
        .filter(|x| x["message"] == "failed parsing interruption message")
        .count();
    assert_eq!(parse_warnings, 0, "no-ops are not parse failures");
}

#[tokio::test]
async fn a_capacity_reservation_interruption_marks_the_reserved_offering_and_is_recorded() {
    let w = spot_cluster().await;
    let victim = claims(&w.client).await[0].clone();
    let name = victim.metadata.name.clone().unwrap();
    let label = |k: &str| victim.metadata.labels.as_ref().unwrap()[k].clone();
    let reserved = format!(
        "reserved_{}_{}",
        label("node.kubernetes.io/instance-type"),
        label("topology.kubernetes.io/zone")
    );
    let interrupted = json!({"version": "0", "id": "c-1",
        "detail-type": "EC2 Capacity Reservation Instance Interruption Warning", "source": "aws.ec2",
        "time": "2027-01-01T00:05:00Z", "region": "us-west-2", "resources": [],
        "detail": {"instance-id": instance_of(&victim), "instance-action": "terminate"}});
    let event = batch(&[("cr", interrupted.to_string())]);
    let r = handle(
        &w.provisioner,
        &w.termination_queue,
        &event,
        &InterruptOptions::default(),
    )
    .await;
    assert_eq!(r["batchItemFailures"], json!([]));

    let cms: Api<ConfigMap> = Api::namespaced(w.client.clone(), KERF_NAMESPACE);
    let cached = cms
        .get_opt(kerf_catalog::unavailable::CONFIGMAP_NAME)
        .await
        .unwrap()
        .and_then(|c| c.data)
        .unwrap_or_default();
    assert!(cached.contains_key(&reserved), "{reserved} in {cached:?}");
    let reasons: Vec<(String, String)> = events_on(&w, &name)
        .await
        .into_iter()
        .map(|(_, reason, type_, ..)| (reason, type_))
        .collect();
    assert!(
        reasons.contains(&(
            "CapacityReservationInstanceInterrupted".into(),
            "Warning".into()
        )),
        "{reasons:?}"
    );
}
