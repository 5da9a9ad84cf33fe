//! Node repair end to end, behind Karpenter's `NodeRepair` gate: a node NotReady for longer
//! than its toleration is replaced by force and its pods run again elsewhere; no repair while
//! more than 20% of the NodePool is unhealthy (a `NodeRepairBlocked` Event says why) until
//! enough of it heals; nothing without the gate.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers outside #[test] fns

use jiff::SignedDuration;
use k8s_openapi::api::core::v1::Event;
use kerf_e2e::world::*;
use kerf_sim::world::cloud::NodeFault;
use kerf_sim::world::{World, WorldOptions};
use kube::api::{Api, ListParams};

fn gated() -> WorldOptions {
    WorldOptions {
        node_repair: true,
        ..WorldOptions::default()
    }
}

fn not_ready() -> Option<NodeFault> {
    Some(NodeFault {
        condition: "Ready".into(),
        status: "False".into(),
    })
}

/// Two pods that never share a node: two nodes.
const SPREAD: &str = r#"
apiVersion: apps/v1
kind: Deployment
metadata: {name: spread, namespace: default}
spec:
  replicas: 2
  selector: {matchLabels: {app: spread}}
  template:
    metadata: {labels: {app: spread}}
    spec:
      affinity:
        podAntiAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
            - labelSelector: {matchLabels: {app: spread}}
              topologyKey: kubernetes.io/hostname
      containers:
        - name: app
          image: public.ecr.aws/eks-distro/kubernetes/pause:3.7
          resources: {requests: {cpu: "1"}}
"#;

async fn claim_names(w: &World) -> Vec<String> {
    claims(&w.client)
        .await
        .iter()
        .filter_map(|c| c.metadata.name.clone())
        .collect()
}

async fn ran(w: &mut World, want: usize) {
    let ok = w.run_until(SignedDuration::from_mins(5), |c| all_running(c, want));
    assert!(
        ok.await.unwrap(),
        "pods not running: {:?}",
        not_running(&w.client).await
    );
}

#[tokio::test]
async fn a_node_not_ready_past_its_toleration_is_replaced_by_force() {
    let mut w = getting_started_with(gated()).await.unwrap();
    w.apply(&inflate(5)).await.unwrap();
    ran(&mut w, 5).await;
    let sick = claim_names(&w).await;
    assert_eq!(sick.len(), 1);
    let id = w.cloud.instances()[0].info.id.clone();
    w.cloud.fail_node(&id, not_ready());
    w.run_for(SignedDuration::from_mins(29)).await.unwrap();
    assert_eq!(claim_names(&w).await, sick, "tolerated for 30 minutes");
    let name = sick[0].clone();
    assert!(
        replaced(&mut w, &name, 5, SignedDuration::from_mins(10))
            .await
            .unwrap()
    );
    let entries = w.logs.entries();
    let line = entries
        .iter()
        .find(|l| l["message"] == "deleting unhealthy node")
        .expect("the repair is logged");
    assert_eq!(line["controller"], "node.health");
    assert_eq!(line["condition"], "Ready");
    assert!(violations(&w).await.is_empty());
}

#[tokio::test]
async fn repair_waits_while_too_much_of_the_pool_is_unhealthy() {
    let mut w = getting_started_with(gated()).await.unwrap();
    w.apply(SPREAD).await.unwrap();
    ran(&mut w, 2).await;
    let before = claim_names(&w).await;
    assert_eq!(before.len(), 2);
    let ids: Vec<String> = w
        .cloud
        .instances()
        .iter()
        .map(|i| i.info.id.clone())
        .collect();
    for id in &ids {
        w.cloud.fail_node(id, not_ready());
    }
    // 2 of 2 unhealthy is more than 20% (1 of 2, rounded up).
    w.run_for(SignedDuration::from_mins(45)).await.unwrap();
    assert_eq!(
        claim_names(&w).await,
        before,
        "no repair while the pool is this unhealthy"
    );
    let events: Vec<Event> = Api::<Event>::all(w.client.clone())
        .list(&ListParams::default())
        .await
        .unwrap()
        .items;
    let blocked = events
        .iter()
        .find(|e| e.reason.as_deref() == Some("NodeRepairBlocked"))
        .expect("a NodeRepairBlocked Event");
    assert!(
        blocked
            .message
            .as_deref()
            .unwrap_or_default()
            .contains("more than 20% nodes are unhealthy in the nodepool"),
        "{blocked:?}"
    );
    // One heals: 1 of 2 unhealthy is within the limit, and the other is repaired.
    w.cloud.fail_node(&ids[0], None);
    w.run_for(SignedDuration::from_mins(1)).await.unwrap();
    let ok = w
        .run_until(SignedDuration::from_mins(10), |c| async move {
            claims(&c).await.len() == 2 && all_running(c, 2).await
        })
        .await
        .unwrap();
    assert!(ok);
    let after = claim_names(&w).await;
    assert_eq!(
        after.iter().filter(|n| before.contains(n)).count(),
        1,
        "{before:?} → {after:?}"
    );
}

#[tokio::test]
async fn without_the_gate_an_unhealthy_node_stays() {
    let mut w = getting_started().await.unwrap();
    w.apply(&inflate(5)).await.unwrap();
    ran(&mut w, 5).await;
    let before = claim_names(&w).await;
    let id = w.cloud.instances()[0].info.id.clone();
    w.cloud.fail_node(&id, not_ready());
    w.run_for(SignedDuration::from_mins(45)).await.unwrap();
    assert_eq!(claim_names(&w).await, before);
}
