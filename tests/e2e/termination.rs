//! Termination end to end in simulated time: a NodeClaim running the `inflate` pods is
//! deleted; the termination function taints and drains its node through the Eviction API
//! (a PodDisruptionBudget lets one pod go at a time), the evicted pods get capacity again,
//! the instance is terminated, and the Node and NodeClaim go. A deleted Node takes its
//! NodeClaim down the same way. Redelivered messages and a crash after any external call
//! change nothing.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers outside #[test] fns

use jiff::SignedDuration;
use kerf_api::v1::NodeClaim;
use kerf_e2e::world::*;
use kerf_sim::world::World;
use kube::api::{Api, DeleteParams};

const PDB: &str = "apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: inflate, namespace: default}
spec:
  minAvailable: 4
  selector: {matchLabels: {app: inflate}}
";

pub(crate) async fn running_cluster() -> (TestWorld, String) {
    running_cluster_on(On::InProcess).await
}

/// [`running_cluster`] on `on`.
pub(crate) async fn running_cluster_on(on: On) -> (TestWorld, String) {
    let mut w = getting_started_on(on, coarse()).await;
    w.apply(&inflate(5)).await.unwrap();
    w.apply(PDB).await.unwrap();
    assert!(
        w.run_until(SignedDuration::from_mins(3), |c| all_running(c, 5))
            .await
            .unwrap()
    );
    let name = claims(&w.client).await[0].metadata.name.clone().unwrap();
    (w, name)
}

pub(crate) async fn delete_claim(w: &World, name: &str) {
    Api::<NodeClaim>::all(w.client.clone())
        .delete(name, &DeleteParams::default())
        .await
        .unwrap();
    kerf_control::retire::enqueue(&w.termination_queue, name, 0)
        .await
        .unwrap();
}

fn ready_pods(pods: &[k8s_openapi::api::core::v1::Pod]) -> usize {
    pods.iter()
        .filter(|p| p.metadata.deletion_timestamp.is_none())
        .filter(|p| {
            p.status
                .as_ref()
                .and_then(|s| s.conditions.as_ref())
                .is_some_and(|cs| cs.iter().any(|c| c.type_ == "Ready" && c.status == "True"))
        })
        .count()
}

/// Ticks until the claim is gone, checking the PDB's floor after every tick.
async fn until_gone(w: &mut World, name: &str, max: SignedDuration) -> bool {
    let end = w.now() + max;
    while w.now() < end {
        w.tick().await.unwrap();
        let ready = ready_pods(&pods(&w.client).await);
        assert!(
            ready >= 4,
            "the PodDisruptionBudget's floor was broken: {ready} ready at {}",
            w.now()
        );
        if !claims(&w.client)
            .await
            .iter()
            .any(|c| c.metadata.name.as_deref() == Some(name))
        {
            return true;
        }
    }
    false
}

on_both! {
async fn a_deleted_nodeclaim_is_drained_respecting_its_pdb_then_terminated(on) {
    let (mut w, name) = running_cluster_on(on).await;
    let instance = w.cloud.instances()[0].info.id.clone();
    let node = claims(&w.client).await[0]
        .status
        .clone()
        .unwrap()
        .node_name
        .unwrap();
    delete_claim(&w, &name).await;
    assert!(
        until_gone(&mut w, &name, SignedDuration::from_mins(10)).await,
        "{:?}",
        w.logs.lines().iter().rev().take(20).collect::<Vec<_>>()
    );
    assert!(
        w.run_until(SignedDuration::from_mins(3), |c| all_running(c, 5))
            .await
            .unwrap()
    );
    assert!(
        nodes(&w.client)
            .await
            .iter()
            .all(|n| n.metadata.name.as_deref() != Some(&node)),
        "the node is gone"
    );
    let old = w
        .cloud
        .instances()
        .into_iter()
        .find(|i| i.info.id == instance)
        .unwrap();
    assert_eq!(old.info.state, "terminated");
    // The drained node's five pods got one replacement, launched for all of them while the
    // drain went on one pod at a time, not one launch per evicted pod.
    let launched = w.cloud.instances().len();
    assert_eq!(launched, 2, "one replacement for the drained node's pods");
    assert_eq!(w.logs.with_message("tainted node").len(), 1);
    assert_eq!(w.logs.with_message("deleted node").len(), 1);
    assert_eq!(w.logs.with_message("deleted nodeclaim").len(), 1);
    let events = kube::api::Api::<k8s_openapi::api::core::v1::Event>::namespaced(
        w.client.clone(),
        "default",
    )
    .list(&Default::default())
    .await
    .unwrap()
    .items;
    assert!(
        events
            .iter()
            .any(|e| e.reason.as_deref() == Some("Evicted"))
    );
    assert!(
        events
            .iter()
            .any(|e| e.reason.as_deref() == Some("FailedDraining")),
        "the PDB held pods back"
    );
    assert!(
        violations(&w).await.is_empty(),
        "{:?}",
        violations(&w).await
    );
}
}

#[tokio::test]
async fn a_deleted_node_takes_its_nodeclaim_and_instance_down_without_breaking_the_pdb() {
    let (mut w, name) = running_cluster().await;
    let instance = w.cloud.instances()[0].info.id.clone();
    let node = claims(&w.client).await[0]
        .status
        .clone()
        .unwrap()
        .node_name
        .unwrap();
    // `kubectl delete node`: the termination finalizer holds the Node; the next disruption
    // sweep deletes its NodeClaim and queues the termination.
    Api::<k8s_openapi::api::core::v1::Node>::all(w.client.clone())
        .delete(&node, &DeleteParams::default())
        .await
        .unwrap();
    assert!(
        until_gone(&mut w, &name, SignedDuration::from_mins(10)).await,
        "{:?}",
        w.logs.lines().iter().rev().take(20).collect::<Vec<_>>()
    );
    assert_eq!(
        w.logs
            .with_message("deleted nodeclaim of a deleting node")
            .len(),
        1
    );
    assert!(
        w.run_until(SignedDuration::from_mins(3), |c| all_running(c, 5))
            .await
            .unwrap()
    );
    assert!(
        nodes(&w.client)
            .await
            .iter()
            .all(|n| n.metadata.name.as_deref() != Some(&node))
    );
    let old = w
        .cloud
        .instances()
        .into_iter()
        .find(|i| i.info.id == instance);
    assert_eq!(old.unwrap().info.state, "terminated");
}

#[tokio::test]
async fn redelivered_termination_messages_change_nothing() {
    let (mut w, name) = running_cluster().await;
    delete_claim(&w, &name).await;
    for _ in 0..3 {
        kerf_control::retire::enqueue(&w.termination_queue, &name, 0)
            .await
            .unwrap();
    }
    assert!(until_gone(&mut w, &name, SignedDuration::from_mins(10)).await);
    for _ in 0..3 {
        kerf_control::retire::enqueue(&w.termination_queue, &name, 0)
            .await
            .unwrap();
    }
    w.run_for(SignedDuration::from_mins(2)).await.unwrap();
    assert_eq!(w.logs.with_message("tainted node").len(), 1, "drained once");
    assert_eq!(w.logs.with_message("deleted nodeclaim").len(), 1);
    assert!(all_running(w.client.clone(), 5).await);
    assert!(violations(&w).await.is_empty());
}

#[tokio::test]
async fn an_empty_node_stays_draining_for_the_minimum_drain_time_however_often_it_is_woken() {
    let mut w = one_empty_node(kerf_sim::world::WorldOptions::default()).await;
    let name = claims(&w.client).await[0].metadata.name.clone().unwrap();
    let started = w.now();
    delete_claim(&w, &name).await;
    // The termination function is woken every second (duplicates, sweeps): Karpenter's
    // MinDrainTime still holds the instance until the node has drained for 5 s.
    let mut terminated = None;
    while terminated.is_none() && w.now() < started + SignedDuration::from_secs(30) {
        kerf_control::retire::enqueue(&w.termination_queue, &name, 0)
            .await
            .unwrap();
        w.tick().await.unwrap();
        if w.cloud.calls("TerminateInstances") > 0 {
            terminated = Some(w.now());
        }
    }
    let after = terminated
        .expect("the instance was terminated")
        .duration_since(started);
    assert!(
        after >= kerf_control::terminate::MIN_DRAIN_TIME,
        "terminated {after:?} after the drain began"
    );
    assert!(
        after <= SignedDuration::from_secs(7),
        "terminated {after:?} after the drain began: the wait is precise"
    );
}
