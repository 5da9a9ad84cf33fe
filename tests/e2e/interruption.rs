//! Interruption end to end in simulated time, Kerf's real handler against the in-process API
//! server and the simulated EC2: a spot warning for a node running pods gets a replacement on
//! another offering in the same invocation, the node drained and its instance terminated, and
//! every pod running again well within the two minutes' notice; the same message again
//! changes nothing; unparseable and unmanaged messages are dropped, never retried. Every
//! interruption is recorded as Karpenter records it, an Event on the NodeClaim and its Node.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers outside #[test] fns

use jiff::SignedDuration;
use kerf_control::interrupt::InterruptOptions;
use kerf_e2e::events::interruption as handle;
use kerf_e2e::world::*;
use kerf_sim::world::World;
use kerf_sim::world::crash::CrashSwitch;
use serde_json::{Value, json};

mod events;

fn spot_warning(instance: &str) -> String {
    json!({"version": "0", "id": format!("warning-{instance}"), "detail-type": "EC2 Spot Instance Interruption Warning",
           "source": "aws.ec2", "account": "123456789012", "time": "2027-01-01T00:05:00Z", "region": "us-west-2",
           "resources": [format!("arn:aws:ec2:us-west-2a:instance/{instance}")],
           "detail": {"instance-id": instance, "instance-action": "terminate"}})
    .to_string()
}

fn batch(bodies: &[(&str, String)]) -> Value {
    let records: Vec<Value> = bodies
        .iter()
        .map(|(id, body)| json!({"messageId": id, "body": body, "attributes": {"SentTimestamp": "0"}}))
        .collect();
    json!({"Records": records})
}

/// A spot pool running six `inflate` pods.
pub(crate) async fn spot_cluster() -> TestWorld {
    spot_cluster_on(On::InProcess).await
}

/// [`spot_cluster`] on `on`.
pub(crate) async fn spot_cluster_on(on: On) -> TestWorld {
    spot_cluster_of(on, &read("examples/getting-started/nodepool.yaml")).await
}

/// [`spot_cluster`] on nodes of 4 vCPU, so the pods need several.
async fn small_spot_cluster() -> TestWorld {
    let pool = read("examples/getting-started/nodepool.yaml").replace(
        "values: [\"2\"]",
        "values: [\"2\"]\n        - key: karpenter.k8s.aws/instance-cpu\n          operator: In\n          values: [\"4\"]",
    );
    spot_cluster_of(On::InProcess, &pool).await
}

async fn spot_cluster_of(on: On, pool: &str) -> TestWorld {
    let mut w = getting_started_on(on, coarse()).await;
    w.apply(
        &pool
            .replace("values: [\"on-demand\"]", "values: [\"spot\"]")
            .replace("consolidateAfter: 1m", "consolidateAfter: Never"),
    )
    .await
    .unwrap();
    w.apply(&inflate(6)).await.unwrap();
    assert!(
        w.run_until(SignedDuration::from_mins(3), |c| all_running(c, 6))
            .await
            .unwrap()
    );
    w
}

fn label(c: &kerf_api::v1::NodeClaim, k: &str) -> String {
    c.metadata
        .labels
        .as_ref()
        .and_then(|l| l.get(k).cloned())
        .unwrap_or_default()
}

on_both! {
async fn a_spot_warning_replaces_the_node_before_it_goes_and_loses_no_pod(on) {
    let mut w = spot_cluster_on(on).await;
    let before = claims(&w.client).await;
    let victim = before[0].clone();
    let name = victim.metadata.name.clone().unwrap();
    assert_eq!(label(&victim, "karpenter.sh/capacity-type"), "spot");
    let instance = kerf_control::claim::provider_id(&victim)
        .unwrap()
        .rsplit('/')
        .next()
        .unwrap()
        .to_string();
    let event = batch(&[("m1", spot_warning(&instance))]);
    let opts = InterruptOptions::default();
    let r = handle(&w.provisioner, &w.termination_queue, &event, &opts).await;
    assert_eq!(r["batchItemFailures"], json!([]));
    let emf = w.logs.entries();
    for n in [
        "karpenter_interruption_received_messages_total",
        "karpenter_interruption_deleted_messages_total",
        "karpenter_interruption_message_queue_duration_seconds",
    ] {
        assert!(
            emf.iter().any(|x| x.get(n).is_some()),
            "no EMF line for {n}"
        );
    }
    assert!(
        emf.iter().any(
            |x| x["message"] == "initiating delete from interruption message"
                && x["messageKind"] == "spot_interrupted"
        ),
        "Karpenter's log line"
    );

    let now = claims(&w.client).await;
    let replacements: Vec<_> = now
        .iter()
        .filter(|c| !before.iter().any(|b| b.metadata.name == c.metadata.name))
        .collect();
    assert_eq!(
        replacements.len(),
        1,
        "a replacement in the same invocation"
    );
    let old = now
        .iter()
        .find(|c| c.metadata.name.as_deref() == Some(&name))
        .unwrap();
    assert!(
        old.metadata.deletion_timestamp.is_some(),
        "its termination started"
    );
    let offering = |c: &kerf_api::v1::NodeClaim| {
        (
            label(c, "node.kubernetes.io/instance-type"),
            label(c, "topology.kubernetes.io/zone"),
        )
    };
    assert_ne!(
        offering(replacements[0]),
        offering(&victim),
        "the reclaimed offering is left out"
    );

    assert!(
        replaced(&mut w, &name, 6, SignedDuration::from_mins(2))
            .await
            .unwrap(),
        "every pod runs again and the node is gone within the two minutes: {:?}",
        not_running(&w.client).await
    );
    assert!(
        w.cloud
            .instances()
            .iter()
            .any(|i| i.info.id == instance && i.info.state == "terminated")
    );

    let again = handle(&w.provisioner, &w.termination_queue, &event, &opts).await;
    assert_eq!(again["batchItemFailures"], json!([]));
    w.run_for(SignedDuration::from_mins(1)).await.unwrap();
    assert_eq!(
        claims(&w.client).await.len(),
        before.len(),
        "the same warning again changes nothing"
    );
    assert!(
        violations(&w).await.is_empty(),
        "{:?}",
        violations(&w).await
    );
}
}

#[tokio::test]
async fn unparseable_unknown_and_unmanaged_messages_are_dropped() {
    let w = spot_cluster().await;
    let before = claims(&w.client).await.len();
    let event = batch(&[
        ("bad", "not json".into()),
        (
            "other",
            json!({"version": "0", "detail-type": "x", "source": "my.app", "detail": {}})
                .to_string(),
        ),
        ("stranger", spot_warning("i-0000000000000dead")),
    ]);
    let r = handle(
        &w.provisioner,
        &w.termination_queue,
        &event,
        &InterruptOptions::default(),
    )
    .await;
    assert_eq!(r["batchItemFailures"], json!([]), "nothing comes back");
    assert_eq!(claims(&w.client).await.len(), before, "nothing acted");
}

pub(crate) fn instance_of(c: &kerf_api::v1::NodeClaim) -> String {
    kerf_control::claim::provider_id(c)
        .unwrap()
        .rsplit('/')
        .next()
        .unwrap()
        .to_string()
}

/// Two warnings and an unparseable message for two spot nodes, by node name order.
async fn two_warnings(w: &World) -> (Value, Vec<String>) {
    let mut cs = claims(&w.client).await;
    cs.sort_by(|a, b| a.metadata.name.cmp(&b.metadata.name));
    assert!(cs.len() >= 2, "{} nodes", cs.len());
    let event = batch(&[
        ("first", spot_warning(&instance_of(&cs[0]))),
        ("garbled", "{".into()),
        ("second", spot_warning(&instance_of(&cs[1]))),
    ]);
    let names = cs
        .iter()
        .map(|c| c.metadata.name.clone().unwrap())
        .collect();
    (event, names)
}

#[tokio::test]
async fn only_the_message_whose_handling_fails_transiently_comes_back() {
    let opts = InterruptOptions::default();
    let calls = {
        let w = small_spot_cluster().await;
        let (event, _) = two_warnings(&w).await;
        let switch = CrashSwitch::after(usize::MAX);
        let r = handle(&w.crashing(&switch), &w.termination_queue, &event, &opts).await;
        assert_eq!(r["batchItemFailures"], json!([]));
        switch.names()
    };
    // The last deletion of a clean run starts the second node's termination (the Events
    // after it are best effort): failing it fails the second message only.
    let last_delete = calls
        .iter()
        .rposition(|n| *n == "delete_node_claim")
        .unwrap();
    let w = small_spot_cluster().await;
    let (event, names) = two_warnings(&w).await;
    let switch = CrashSwitch::after(last_delete);
    let r = handle(&w.crashing(&switch), &w.termination_queue, &event, &opts).await;
    assert_eq!(
        r["batchItemFailures"],
        json!([{"itemIdentifier": "second"}]),
        "the good message and the garbled one are deleted"
    );
    let now = claims(&w.client).await;
    let deleting = |n: &str| {
        now.iter()
            .find(|c| c.metadata.name.as_deref() == Some(n))
            .is_some_and(|c| c.metadata.deletion_timestamp.is_some())
    };
    assert!(deleting(&names[0]), "the first node is being terminated");
    assert!(!deleting(&names[1]), "the second waits for its redelivery");
    let again = handle(
        &w.provisioner,
        &w.termination_queue,
        &batch(&[(
            "second",
            spot_warning(&instance_of(
                now.iter()
                    .find(|c| c.metadata.name.as_deref() == Some(names[1].as_str()))
                    .unwrap(),
            )),
        )]),
        &opts,
    )
    .await;
    assert_eq!(again["batchItemFailures"], json!([]));
    assert!(
        claims(&w.client)
            .await
            .iter()
            .any(|c| c.metadata.name.as_deref() == Some(names[1].as_str())
                && c.metadata.deletion_timestamp.is_some()),
        "the redelivery starts the second termination"
    );
}

#[tokio::test]
async fn a_warning_through_the_queue_is_handled_before_ec2_takes_the_instance() {
    let mut w = spot_cluster().await;
    let victim = claims(&w.client).await[0].clone();
    let name = victim.metadata.name.clone().unwrap();
    let instance = instance_of(&victim);
    w.interrupt(std::slice::from_ref(&instance)).await;
    let warned = w.now();
    let done = replaced(&mut w, &name, 6, SignedDuration::from_mins(2))
        .await
        .unwrap();
    assert!(
        done,
        "pods running elsewhere and the node gone within the notice: {:?}",
        not_running(&w.client).await
    );
    assert!(w.now() < warned + SignedDuration::from_mins(2));
    w.run_for(SignedDuration::from_mins(2)).await.unwrap();
    assert!(
        w.cloud
            .instances()
            .iter()
            .any(|i| i.info.id == instance && i.info.state == "terminated")
    );
    assert!(all_running(w.client.clone(), 6).await);
    assert!(
        violations(&w).await.is_empty(),
        "{:?}",
        violations(&w).await
    );
}
