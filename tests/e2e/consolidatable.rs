//! The `Consolidatable` condition, as Karpenter keeps it on NodeClaims: absent while
//! `consolidateAfter` (1m) has not passed since the node's last pod event, true once it has
//! (whether or not the node can be disrupted: here a `do-not-disrupt` pod keeps it), and
//! removed again when a pod leaves the node; the node the pods keep says why on its NodeClaim
//! and its Node (`DisruptionBlocked`).

#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers outside #[test] fns

use jiff::SignedDuration;
use k8s_openapi::api::core::v1::{Event, Pod};
use kerf_e2e::world::*;
use kube::api::{Api, DeleteParams};

async fn consolidatable(w: &kerf_sim::world::World) -> bool {
    claims(&w.client)
        .await
        .iter()
        .all(|c| condition(c, "Consolidatable"))
}

async fn has_condition(w: &kerf_sim::world::World) -> bool {
    claims(&w.client).await.iter().any(|c| {
        c.status
            .as_ref()
            .is_some_and(|s| s.conditions.iter().any(|k| k.type_ == "Consolidatable"))
    })
}

#[tokio::test]
async fn consolidatable_follows_consolidate_after_since_the_last_pod_event() {
    let mut w = getting_started().await.unwrap();
    let kept = inflate(3).replace(
        "      labels:\n        app: inflate\n",
        "      labels:\n        app: inflate\n      annotations:\n        karpenter.sh/do-not-disrupt: \"true\"\n",
    );
    w.apply(&kept).await.unwrap();
    let ran = w.run_until(SignedDuration::from_mins(3), |c| all_running(c, 3));
    assert!(ran.await.unwrap());
    assert_eq!(claims(&w.client).await.len(), 1);
    assert!(!has_condition(&w).await, "just initialized: not yet");
    w.run_for(SignedDuration::from_secs(90)).await.unwrap();
    assert!(consolidatable(&w).await, "a minute past its last pod event");
    // A pod leaves: a pod event, and the window starts again.
    let pods: Api<Pod> = Api::namespaced(w.client.clone(), "default");
    let one = pods_of(&w).await.remove(0);
    pods.delete(&one, &DeleteParams::default()).await.unwrap();
    w.run_for(SignedDuration::from_secs(50)).await.unwrap();
    assert!(!has_condition(&w).await, "removed after the pod event");
    w.run_for(SignedDuration::from_secs(90)).await.unwrap();
    assert!(consolidatable(&w).await, "true again a minute later");
    assert_eq!(
        claims(&w.client).await.len(),
        1,
        "the do-not-disrupt pods keep the node"
    );
    // And say so, on the NodeClaim and on its Node, as Karpenter does.
    let events: Api<Event> = Api::namespaced(w.client.clone(), "default");
    let blocked: Vec<(String, String)> = events
        .list(&Default::default())
        .await
        .unwrap()
        .items
        .into_iter()
        .filter(|e| e.reason.as_deref() == Some("DisruptionBlocked"))
        .map(|e| {
            (
                e.involved_object.kind.unwrap_or_default(),
                e.message.unwrap_or_default(),
            )
        })
        .collect();
    for kind in ["NodeClaim", "Node"] {
        assert!(
            blocked
                .iter()
                .any(|(k, m)| k == kind && m.contains("do-not-disrupt")),
            "{kind}: {blocked:?}"
        );
    }
}

async fn pods_of(w: &kerf_sim::world::World) -> Vec<String> {
    pods(&w.client)
        .await
        .iter()
        .filter_map(|p| p.metadata.name.clone())
        .collect()
}
