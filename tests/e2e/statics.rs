//! Static NodePools end to end, behind Karpenter's `StaticCapacity` gate: a pool with
//! `replicas` keeps exactly that many nodes with no pod asking for them, scales down and up
//! with `replicas`, stops at `limits.nodes`, gives pending pods no node of its own, replaces
//! a drifted node one for one, and does nothing without the gate.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers outside #[test] fns

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use jiff::SignedDuration;
use kerf_e2e::world::*;
use kerf_sim::world::{World, WorldOptions};

fn gated() -> WorldOptions {
    WorldOptions {
        static_capacity: true,
        ..WorldOptions::default()
    }
}

/// A static NodePool `fixed` on the getting-started EC2NodeClass.
fn fixed(replicas: u32, node_limit: Option<u32>, team: &str) -> String {
    let limits = node_limit.map_or(String::new(), |n| format!("  limits: {{nodes: {n}}}\n"));
    format!(
        r#"apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {{name: fixed}}
spec:
  replicas: {replicas}
{limits}  template:
    metadata: {{labels: {{team: {team}}}}}
    spec:
      requirements:
        - {{key: karpenter.k8s.aws/instance-family, operator: In, values: [m5]}}
        - {{key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}}
      nodeClassRef: {{group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}}
"#
    )
}

/// The pool's NodeClaims that are not being deleted, and how many of them are initialized.
async fn fixed_claims(w: &World) -> (Vec<String>, usize) {
    let all = claims(&w.client).await;
    let live: Vec<_> = all
        .iter()
        .filter(|c| {
            c.metadata.deletion_timestamp.is_none()
                && c.metadata
                    .labels
                    .as_ref()
                    .and_then(|l| l.get("karpenter.sh/nodepool"))
                    .is_some_and(|p| p == "fixed")
        })
        .collect();
    let ready = live.iter().filter(|c| condition(c, "Initialized")).count();
    let names = live
        .iter()
        .filter_map(|c| c.metadata.name.clone())
        .collect();
    (names, ready)
}

/// Runs until the static pool has exactly `n` NodeClaims, all initialized, and none going.
async fn settles_at(w: &mut World, n: usize) {
    let ok = w
        .run_until(SignedDuration::from_mins(5), |c| async move {
            let all = claims(&c).await;
            let mine: Vec<_> = all
                .iter()
                .filter(|x| {
                    x.metadata
                        .labels
                        .as_ref()
                        .and_then(|l| l.get("karpenter.sh/nodepool"))
                        .is_some_and(|p| p == "fixed")
                })
                .collect();
            mine.len() == n && mine.iter().all(|x| condition(x, "Initialized"))
        })
        .await
        .unwrap();
    let messages: Vec<_> = w
        .logs
        .entries()
        .into_iter()
        .filter_map(|e| {
            e.get("message").map(|m| {
                format!(
                    "{} {m} {}",
                    e["level"],
                    e.get("error").cloned().unwrap_or_default()
                )
            })
        })
        .collect();
    assert!(
        ok,
        "not settled at {n}: {:?}; log: {messages:#?}",
        fixed_claims(w).await
    );
}

#[tokio::test]
async fn a_static_pool_keeps_its_replicas_and_follows_them_down_and_up() {
    let mut w = getting_started_with(gated()).await.unwrap();
    w.apply(&fixed(3, None, "a")).await.unwrap();
    settles_at(&mut w, 3).await;
    assert_eq!(
        nodes(&w.client).await.len(),
        3,
        "three nodes with no pod asking for them"
    );

    w.apply(&fixed(1, None, "a")).await.unwrap();
    settles_at(&mut w, 1).await;
    assert_eq!(
        nodes(&w.client).await.len(),
        1,
        "the surplus was drained and terminated"
    );

    w.apply(&fixed(2, None, "a")).await.unwrap();
    settles_at(&mut w, 2).await;
    w.run_for(SignedDuration::from_mins(10)).await.unwrap();
    assert_eq!(fixed_claims(&w).await.0.len(), 2, "never consolidated");
}

#[tokio::test]
async fn limits_nodes_caps_a_static_pool_and_pending_pods_get_no_node_from_it() {
    let mut w = getting_started_with(gated()).await.unwrap();
    // Only the static pool: pods have nowhere to go.
    w.delete(None, "NodePool", None, "default").await.unwrap();
    w.apply(&fixed(4, Some(2), "a")).await.unwrap();
    settles_at(&mut w, 2).await;
    w.apply(&inflate(40)).await.unwrap();
    w.run_for(SignedDuration::from_mins(3)).await.unwrap();
    assert_eq!(
        fixed_claims(&w).await.0.len(),
        2,
        "pending pods launch nothing in a static pool"
    );
    assert!(
        !w.logs
            .with_message("nodepool node limit reached")
            .is_empty(),
        "the limit is logged"
    );
}

#[tokio::test]
async fn a_drifted_static_node_is_replaced_one_for_one() {
    let mut w = getting_started_with(gated()).await.unwrap();
    w.apply(&fixed(2, None, "a")).await.unwrap();
    settles_at(&mut w, 2).await;
    let (before, _) = fixed_claims(&w).await;
    w.apply(&fixed(2, None, "b")).await.unwrap();
    let most = Arc::new(AtomicUsize::new(0));
    let seen = most.clone();
    let ok = w
        .run_until(SignedDuration::from_mins(20), |c| {
            let before = before.clone();
            let seen = seen.clone();
            async move {
                let all = claims(&c).await;
                seen.fetch_max(all.len(), Ordering::SeqCst);
                let old_gone = !all
                    .iter()
                    .any(|x| x.metadata.name.as_ref().is_some_and(|n| before.contains(n)));
                let fresh = all.iter().filter(|x| condition(x, "Initialized")).count();
                old_gone && fresh == 2
            }
        })
        .await
        .unwrap();
    assert!(
        ok,
        "drifted nodes not replaced: {:?}",
        fixed_claims(&w).await
    );
    assert_eq!(
        most.load(Ordering::SeqCst),
        3,
        "replaced one for one, the replacement first: never more than replicas + 1"
    );
}

#[tokio::test]
async fn without_the_gate_a_static_pool_launches_nothing() {
    let mut w = getting_started().await.unwrap();
    w.apply(&fixed(2, None, "a")).await.unwrap();
    w.run_for(SignedDuration::from_mins(3)).await.unwrap();
    assert!(fixed_claims(&w).await.0.is_empty());
}
