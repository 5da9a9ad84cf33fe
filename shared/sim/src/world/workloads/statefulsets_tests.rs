//! The StatefulSet controller: its pods and claims, ordered creation, scale-down from the
//! highest ordinal.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeSet;

use jiff::SignedDuration;
use kube::api::ListParams;

use super::*;
use crate::world::{World, WorldOptions};

const NODEPOOL: &str = include_str!("../../../../../examples/getting-started/nodepool.yaml");

const GP3: &str = "apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: gp3}
provisioner: ebs.csi.aws.com
volumeBindingMode: WaitForFirstConsumer
";

fn manifest(replicas: u32, policy: &str) -> String {
    format!(
        "apiVersion: apps/v1
kind: StatefulSet
metadata: {{name: db, namespace: default}}
spec:
  replicas: {replicas}
  podManagementPolicy: {policy}
  serviceName: db-headless
  selector: {{matchLabels: {{app: db}}}}
  template:
    metadata: {{labels: {{app: db}}}}
    spec:
      containers: [{{name: c, image: pause, resources: {{requests: {{cpu: 100m}}}}}}]
      volumes: [{{name: config, emptyDir: {{}}}}]
  volumeClaimTemplates:
    - metadata: {{name: data}}
      spec:
        accessModes: [ReadWriteOnce]
        storageClassName: gp3
        resources: {{requests: {{storage: 1Gi}}}}
"
    )
}

fn set(replicas: u32, policy: &str) -> StatefulSet {
    let v: serde_json::Value = yaml_serde::from_str(&manifest(replicas, policy)).unwrap();
    let mut s: StatefulSet = serde_json::from_value(v).unwrap();
    s.metadata.uid = Some("u-db".into());
    s
}

#[test]
fn an_ordinals_pod_mounts_its_own_claims() {
    let p = pod_for(&set(3, "OrderedReady"), 2).unwrap();
    assert_eq!(p.metadata.name.as_deref(), Some("db-2"));
    let labels = p.metadata.labels.clone().unwrap();
    assert_eq!(labels[POD_NAME_LABEL], "db-2");
    assert_eq!(labels[POD_INDEX_LABEL], "2");
    assert_eq!(labels["app"], "db");
    let owner = &p.metadata.owner_references.as_ref().unwrap()[0];
    assert_eq!(
        (owner.kind.as_str(), owner.name.as_str()),
        ("StatefulSet", "db")
    );
    let spec = p.spec.unwrap();
    assert_eq!(spec.hostname.as_deref(), Some("db-2"));
    assert_eq!(spec.subdomain.as_deref(), Some("db-headless"));
    let volumes = spec.volumes.unwrap();
    assert_eq!(volumes.len(), 2, "the template's volume and the claim");
    let claim = volumes[1].persistent_volume_claim.as_ref().unwrap();
    assert_eq!(claim.claim_name, "data-db-2");
}

#[test]
fn an_ordinals_claims_come_from_the_templates() {
    let claims = claims_for(&set(3, "Parallel"), 1);
    assert_eq!(claims.len(), 1);
    let c = &claims[0];
    assert_eq!(c.metadata.name.as_deref(), Some("data-db-1"));
    assert_eq!(c.metadata.namespace.as_deref(), Some("default"));
    assert_eq!(c.metadata.labels.as_ref().unwrap()["app"], "db");
    assert!(
        c.metadata.owner_references.is_none(),
        "kept when the set goes"
    );
}

#[test]
fn the_policy_defaults_to_ordered_ready() {
    assert_eq!(
        PodManagement::of(&set(1, "Parallel")),
        PodManagement::Parallel
    );
    let mut s = set(1, "Parallel");
    s.spec.pod_management_policy = None;
    assert_eq!(PodManagement::of(&s), PodManagement::OrderedReady);
}

async fn names(w: &World) -> BTreeSet<String> {
    let api: Api<Pod> = Api::namespaced(w.client.clone(), "default");
    let pods = api.list(&ListParams::default()).await.unwrap().items;
    pods.into_iter()
        .filter(|p| p.metadata.deletion_timestamp.is_none())
        .filter_map(|p| p.metadata.name)
        .collect()
}

#[tokio::test]
async fn ordered_ready_creates_in_order_and_removes_the_highest_first() {
    let mut w = World::start(WorldOptions::default()).await.unwrap();
    w.apply(NODEPOOL).await.unwrap();
    w.apply(GP3).await.unwrap();
    w.apply(&manifest(3, "OrderedReady")).await.unwrap();
    w.tick().await.unwrap();
    w.tick().await.unwrap();
    assert_eq!(
        names(&w).await,
        BTreeSet::from(["db-0".to_string()]),
        "one at a time"
    );
    let all = w
        .run_until(SignedDuration::from_mins(4), |c| async move {
            let pods = Api::<Pod>::namespaced(c, "default")
                .list(&ListParams::default())
                .await
                .unwrap()
                .items;
            pods.iter().filter(|p| running(p)).count() == 3
        })
        .await
        .unwrap();
    assert!(all, "three pods run");
    let api: Api<Pod> = Api::namespaced(w.client.clone(), "default");
    let created = |p: Pod| p.metadata.creation_timestamp.unwrap().0;
    let t0 = created(api.get("db-0").await.unwrap());
    let t1 = created(api.get("db-1").await.unwrap());
    let t2 = created(api.get("db-2").await.unwrap());
    assert!(t0 < t1 && t1 < t2, "each after the one before runs");
    let claims: Api<PersistentVolumeClaim> = Api::namespaced(w.client.clone(), "default");
    assert_eq!(
        claims
            .list(&ListParams::default())
            .await
            .unwrap()
            .items
            .len(),
        3
    );
    w.apply(&manifest(1, "OrderedReady")).await.unwrap();
    w.tick().await.unwrap();
    assert_eq!(
        names(&w).await,
        BTreeSet::from(["db-0".to_string(), "db-1".to_string()])
    );
    w.tick().await.unwrap();
    assert_eq!(names(&w).await, BTreeSet::from(["db-0".to_string()]));
    assert_eq!(
        claims
            .list(&ListParams::default())
            .await
            .unwrap()
            .items
            .len(),
        3,
        "claims are kept"
    );
}
