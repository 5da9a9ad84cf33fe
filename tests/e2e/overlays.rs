//! NodeOverlays end to end, behind Karpenter's `NodeOverlay` gate: a claim whose instance
//! types an overlay reaches is annotated as Karpenter annotates it, a price overlay makes the
//! fleet launch by the overlaid prices (not EC2's list), and an extended resource an overlay
//! adds holds the claim's requests at launch and shows in its capacity.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers outside #[test] fns

use jiff::SignedDuration;
use kerf_e2e::world::*;
use kerf_sim::world::WorldOptions;

fn gated() -> WorldOptions {
    WorldOptions {
        node_overlay: true,
        ..WorldOptions::default()
    }
}

const CHEAP_R7I: &str = r#"
apiVersion: karpenter.sh/v1alpha1
kind: NodeOverlay
metadata: {name: savings-plan-r7i}
spec:
  weight: 20
  requirements:
    - {key: node.kubernetes.io/instance-type, operator: In, values: [r7i.2xlarge]}
  price: "0.05"
"#;

on_both! {
async fn a_price_overlay_annotates_the_claim_and_the_fleet_follows_it(on) {
    let mut w = getting_started_on(on, gated()).await;
    w.apply(CHEAP_R7I).await.unwrap();
    w.apply(&inflate(5)).await.unwrap();
    let ok = w
        .run_until(SignedDuration::from_mins(5), |c| all_running(c, 5))
        .await
        .unwrap();
    assert!(ok, "pods not running: {:?}", not_running(&w.client).await);
    let cs = claims(&w.client).await;
    assert_eq!(cs.len(), 1);
    let a = cs[0].metadata.annotations.clone().unwrap_or_default();
    assert_eq!(
        a.get(kerf_labels::PRICE_OVERLAY_APPLIED).map(String::as_str),
        Some("true")
    );
    assert!(!a.contains_key(kerf_labels::CAPACITY_OVERLAY_APPLIED), "{a:?}");
    let it = cs[0].metadata.labels.as_ref().unwrap()["node.kubernetes.io/instance-type"].clone();
    assert_eq!(it, "r7i.2xlarge", "the fleet took the overlay's priority, not EC2's list price");
    assert!(violations(&w).await.is_empty());
}
}

#[tokio::test]
async fn without_the_gate_overlays_are_not_read() {
    let mut w = getting_started().await.unwrap();
    w.apply(CHEAP_R7I).await.unwrap();
    w.apply(&inflate(5)).await.unwrap();
    let ok = w.run_until(SignedDuration::from_mins(5), |c| all_running(c, 5));
    assert!(ok.await.unwrap());
    let cs = claims(&w.client).await;
    let labels = cs[0].metadata.labels.clone().unwrap();
    assert_ne!(labels["node.kubernetes.io/instance-type"], "r7i.2xlarge");
    assert!(
        cs[0]
            .metadata
            .annotations
            .as_ref()
            .unwrap()
            .get(kerf_labels::PRICE_OVERLAY_APPLIED)
            .is_none()
    );
}

#[tokio::test]
async fn an_overlays_extended_resource_holds_a_claims_requests_at_launch() {
    let mut w = getting_started_with(gated()).await.unwrap();
    w.apply(
        r#"
apiVersion: karpenter.sh/v1alpha1
kind: NodeOverlay
metadata: {name: fuse}
spec:
  requirements:
    - {key: karpenter.k8s.aws/instance-family, operator: In, values: [m7i]}
  capacity: {smarter-devices/fuse: "10"}
---
apiVersion: v1
kind: Pod
metadata: {name: fuse-user, namespace: default}
spec:
  containers:
    - name: app
      image: public.ecr.aws/eks-distro/kubernetes/pause:3.7
      resources:
        requests: {cpu: 500m, smarter-devices/fuse: "1"}
        limits: {smarter-devices/fuse: "1"}
"#,
    )
    .await
    .unwrap();
    let launched = w
        .run_until(SignedDuration::from_mins(2), |c| async move {
            claims(&c).await.iter().any(|x| condition(x, "Launched"))
        })
        .await
        .unwrap();
    assert!(launched, "no claim launched: {:?}", claims(&w.client).await);
    let c = claims(&w.client)
        .await
        .into_iter()
        .find(|x| condition(x, "Launched"))
        .unwrap();
    let labels = c.metadata.labels.clone().unwrap();
    assert_eq!(labels["karpenter.k8s.aws/instance-family"], "m7i");
    let a = c.metadata.annotations.clone().unwrap();
    assert_eq!(a[kerf_labels::CAPACITY_OVERLAY_APPLIED], "true");
    assert!(!a.contains_key(kerf_labels::PRICE_OVERLAY_APPLIED));
    let capacity = c.status.unwrap().capacity;
    assert_eq!(
        capacity.get("smarter-devices/fuse").map(|q| q.0.as_str()),
        Some("10"),
        "the overlay's capacity is the claim's"
    );
}
