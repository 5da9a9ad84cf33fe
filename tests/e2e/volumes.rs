//! Termination and volumes, in simulated time (the in-process server's EBS CSI driver): a
//! node whose pod's volume is still attached keeps its instance after the drain, with its
//! NodeClaim `VolumesDetached=Unknown (AwaitingVolumeDetachment)`, until the attachment is
//! gone; past the termination grace period the attachment no longer holds it.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers outside #[test] fns

use jiff::SignedDuration;
use k8s_openapi::api::storage::v1::VolumeAttachment;
use kerf_api::v1::{ConditionStatus, NodeClaim};
use kerf_e2e::world::*;
use kerf_sim::world::World;
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams};
use serde_json::json;

/// A finalizer standing for a volume the cloud is slow to detach.
const HOLD: &str = "e2e.kerf.dev/slow-detach";

const DATABASE: &str = "apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: gp3}
provisioner: ebs.csi.aws.com
volumeBindingMode: WaitForFirstConsumer
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db, namespace: default}
spec:
  replicas: 1
  serviceName: db
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec:
      terminationGracePeriodSeconds: 0
      containers: [{name: db, image: postgres, resources: {requests: {cpu: '1'}}}]
  volumeClaimTemplates:
    - metadata: {name: data}
      spec:
        accessModes: [ReadWriteOnce]
        storageClassName: gp3
        resources: {requests: {storage: 20Gi}}
";

/// A world running the database on one node whose volume attachment detaches only when
/// the test lets it; the NodeClaim's name and the attachment's.
async fn database(grace: Option<&str>) -> (World, String, String) {
    let w = World::start(coarse()).await.unwrap();
    let mut pool = read("examples/getting-started/nodepool.yaml");
    if let Some(g) = grace {
        pool = pool.replace(
            "expireAfter: 720h",
            &format!("expireAfter: 720h\n      terminationGracePeriod: {g}"),
        );
    }
    w.apply(&pool).await.unwrap();
    w.apply(DATABASE).await.unwrap();
    let mut w = w;
    let up = w
        .run_until(SignedDuration::from_mins(4), |c| all_running(c, 1))
        .await
        .unwrap();
    assert!(up, "the database runs");
    let claim = claims(&w.client).await[0].metadata.name.clone().unwrap();
    let vas = attachments(&w).await;
    assert_eq!(vas.len(), 1, "one attachment: {vas:?}");
    let va = vas[0].metadata.name.clone().unwrap();
    let mut finalizers = vas[0].metadata.finalizers.clone().unwrap_or_default();
    finalizers.push(HOLD.into());
    set_finalizers(&w, &va, &finalizers).await;
    Api::<NodeClaim>::all(w.client.clone())
        .delete(&claim, &DeleteParams::default())
        .await
        .unwrap();
    kerf_control::retire::enqueue(&w.termination_queue, &claim, 0)
        .await
        .unwrap();
    (w, claim, va)
}

async fn attachments(w: &World) -> Vec<VolumeAttachment> {
    Api::<VolumeAttachment>::all(w.client.clone())
        .list(&ListParams::default())
        .await
        .unwrap()
        .items
}

async fn set_finalizers(w: &World, va: &str, finalizers: &[String]) {
    let patch = json!({"metadata": {"finalizers": finalizers}});
    Api::<VolumeAttachment>::all(w.client.clone())
        .patch(va, &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .unwrap();
}

async fn claim(w: &World, name: &str) -> Option<NodeClaim> {
    Api::<NodeClaim>::all(w.client.clone())
        .get_opt(name)
        .await
        .unwrap()
}

fn instance_state(w: &World, c: &NodeClaim) -> String {
    let pid = c.status.as_ref().unwrap().provider_id.clone().unwrap();
    let instances = w.cloud.instances();
    let i = instances
        .iter()
        .find(|i| i.info.provider_id == pid)
        .unwrap();
    i.info.state.clone()
}

fn condition(c: &NodeClaim, type_: &str) -> Option<(ConditionStatus, String)> {
    let conds = &c.status.as_ref()?.conditions;
    let found = conds.iter().find(|x| x.type_ == type_)?;
    Some((found.status, found.reason.clone()))
}

async fn gone(w: &mut World, name: &str, max: SignedDuration) -> bool {
    let name = name.to_string();
    w.run_until(max, |c| {
        let name = name.clone();
        async move {
            let list = claims(&c).await;
            !list
                .iter()
                .any(|x| x.metadata.name.as_deref() == Some(&name))
        }
    })
    .await
    .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_node_keeps_its_instance_until_its_volume_is_detached() {
    let (mut w, name, va) = database(None).await;
    w.run_for(SignedDuration::from_mins(2)).await.unwrap();
    let c = claim(&w, &name).await.expect("still terminating");
    assert_eq!(
        condition(&c, "Drained").map(|d| d.0),
        Some(ConditionStatus::True),
        "the node is drained"
    );
    assert_eq!(
        condition(&c, "VolumesDetached"),
        Some((ConditionStatus::Unknown, "AwaitingVolumeDetachment".into()))
    );
    assert_eq!(instance_state(&w, &c), "running", "not terminated yet");
    let held = attachments(&w).await;
    assert!(
        held[0].metadata.deletion_timestamp.is_some(),
        "the attachment is being detached"
    );
    // The cloud finishes the detach.
    let rest: Vec<String> = held[0]
        .metadata
        .finalizers
        .iter()
        .flatten()
        .filter(|f| *f != HOLD)
        .cloned()
        .collect();
    set_finalizers(&w, &va, &rest).await;
    assert!(
        gone(&mut w, &name, SignedDuration::from_mins(3)).await,
        "the termination completes once the volume is detached"
    );
    let up = w
        .run_until(SignedDuration::from_mins(2), |c| all_running(c, 1))
        .await
        .unwrap();
    assert!(up, "the database runs again, on its new node");
    let now: Vec<String> = attachments(&w)
        .await
        .iter()
        .filter_map(|a| a.metadata.name.clone())
        .collect();
    assert_eq!(now.len(), 1, "its volume, attached to the new node");
    assert_ne!(now[0], va, "not the old attachment");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn past_the_grace_period_an_attached_volume_no_longer_holds_the_node() {
    let (mut w, name, _va) = database(Some("3m")).await;
    let deleted = claim(&w, &name)
        .await
        .unwrap()
        .metadata
        .deletion_timestamp
        .unwrap()
        .0;
    w.run_for(SignedDuration::from_mins(2)).await.unwrap();
    let c = claim(&w, &name).await.expect("held by the attachment");
    assert_eq!(instance_state(&w, &c), "running");
    assert!(
        gone(&mut w, &name, SignedDuration::from_mins(3)).await,
        "the grace period ends the wait"
    );
    assert!(
        w.now() >= deleted + SignedDuration::from_mins(3),
        "not before the deadline"
    );
    let left = attachments(&w).await;
    assert_eq!(left.len(), 1, "the attachment was left behind");
}
