//! Emptiness starts without a validation wait: its nodes are tainted and their pods read
//! again before anything is deleted. A pod bound to the node after the pass read the cluster
//! (the race Karpenter's 15 s validation closes) makes the command abandoned as churn, the
//! taint removed and the node kept; with no such pod the empty node is deleted.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers outside #[test] fns

use jiff::SignedDuration;
use k8s_openapi::api::core::v1::{Node, Pod};
use kerf_control::disrupt::execute;
use kerf_control::view::View;
use kerf_e2e::world::*;
use kerf_engine::plan::{Disruption, Method};
use kerf_sim::world::{World, WorldOptions};
use kube::api::{Api, PostParams};
use serde_json::json;

/// One node whose pods are all gone, past its `consolidateAfter`, with no disruption pass
/// run since it emptied; its name.
async fn emptied() -> (World, String) {
    let options = WorldOptions {
        disruption_every: SignedDuration::from_hours(24),
        ..WorldOptions::default()
    };
    let w = one_empty_node(options).await;
    // Past consolidateAfter (1m) without a tick: no timer or schedule has run a pass.
    w.clock.advance(SignedDuration::from_mins(2));
    let node = nodes(&w.client).await[0].metadata.name.clone().unwrap();
    (w, node)
}

/// The emptiness command a pass would start now.
async fn planned(w: &World) -> (View, Disruption) {
    let view = View::read_with(&w.disruptor, true).await.unwrap();
    let conv = view.convert(&w.disruptor);
    let plan = kerf_engine::disrupt(&conv.snapshot, &Default::default());
    let d = plan
        .disruptions
        .iter()
        .find(|d| d.method == Method::Emptiness)
        .cloned()
        .unwrap_or_else(|| panic!("no emptiness command: {plan:?}"));
    (view, d)
}

fn tainted(n: &Node) -> bool {
    n.spec
        .as_ref()
        .and_then(|s| s.taints.as_ref())
        .is_some_and(|t| t.iter().any(|t| t.key == "karpenter.sh/disrupted"))
}

#[tokio::test]
async fn a_pod_bound_after_the_read_abandons_the_emptiness_command() {
    let (w, node) = emptied().await;
    let (view, d) = planned(&w).await;
    assert_eq!(d.nodes, std::slice::from_ref(&node));
    // Bound by the scheduler after the pass read the cluster, before the command starts.
    let pod: Pod = serde_json::from_value(json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "late", "namespace": "default"},
        "spec": {"nodeName": node, "containers": [{"name": "c", "image": "pause"}]}}))
    .unwrap();
    Api::<Pod>::namespaced(w.client.clone(), "default")
        .create(&PostParams::default(), &pod)
        .await
        .unwrap();
    let started = execute::start(&w.disruptor, &w.termination_queue, &view, &d)
        .await
        .unwrap();
    assert!(!started, "the command is abandoned");
    let logged = logged_at(
        &w,
        &format!("abandoning emptiness command, churn: pod late is on node {node}"),
    );
    assert_eq!(logged.len(), 1, "{:?}", w.logs.entries());
    assert_eq!(claims(&w.client).await.len(), 1, "the NodeClaim stays");
    let n = Api::<Node>::all(w.client.clone()).get(&node).await.unwrap();
    assert!(!tainted(&n), "the disrupted taint is removed: {:?}", n.spec);
    assert!(
        w.termination_queue.is_empty(),
        "nothing queued for termination"
    );
    assert_eq!(all_claims_alive(&w).await, 1, "the node with the pod lives");
}

#[tokio::test]
async fn an_empty_node_is_deleted_when_its_command_starts() {
    let (w, node) = emptied().await;
    let (view, d) = planned(&w).await;
    let started = execute::start(&w.disruptor, &w.termination_queue, &view, &d)
        .await
        .unwrap();
    assert!(started, "the command starts");
    assert!(logged_at(&w, "abandoning emptiness command").is_empty());
    let n = Api::<Node>::all(w.client.clone()).get(&node).await.unwrap();
    assert!(tainted(&n), "the node is tainted: {:?}", n.spec);
    assert_eq!(
        all_claims_alive(&w).await,
        0,
        "its NodeClaim is being deleted"
    );
}

/// NodeClaims not being deleted.
async fn all_claims_alive(w: &World) -> usize {
    claims(&w.client)
        .await
        .iter()
        .filter(|c| c.metadata.deletion_timestamp.is_none())
        .count()
}
