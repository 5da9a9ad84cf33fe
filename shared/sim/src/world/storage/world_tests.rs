//! The simulated EBS CSI driver in a running world: provisioning in the scheduled node's
//! zone, attach before start, detach after the last pod, claims kept across a pod's
//! deletion, and the scheduler keeping pods in their volumes' zones.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeSet;

use jiff::SignedDuration;
use k8s_openapi::api::core::v1::{Node, PersistentVolume, PersistentVolumeClaim, Pod};
use k8s_openapi::api::storage::v1::{CSINode, VolumeAttachment};
use kube::Client;
use kube::api::{Api, DeleteParams, ListParams};
use serde_json::json;

use super::attach::ATTACH_DELAY;
use super::*;
use crate::world::{World, WorldOptions};

const NODEPOOL: &str = include_str!("../../../../../examples/getting-started/nodepool.yaml");

const GP3: &str = "apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: gp3}
provisioner: ebs.csi.aws.com
volumeBindingMode: WaitForFirstConsumer
parameters: {type: gp3}
";

fn statefulset(replicas: u32, policy: &str) -> String {
    format!(
        "apiVersion: apps/v1
kind: StatefulSet
metadata: {{name: db, namespace: default}}
spec:
  replicas: {replicas}
  podManagementPolicy: {policy}
  serviceName: db
  selector: {{matchLabels: {{app: db}}}}
  template:
    metadata: {{labels: {{app: db}}}}
    spec:
      containers: [{{name: c, image: pause, resources: {{requests: {{cpu: '1'}}}}}}]
  volumeClaimTemplates:
    - metadata: {{name: data}}
      spec:
        accessModes: [ReadWriteOnce]
        storageClassName: gp3
        resources: {{requests: {{storage: 10Gi}}}}
"
    )
}

async fn world() -> World {
    let w = World::start(WorldOptions::default()).await.unwrap();
    w.apply(NODEPOOL).await.unwrap();
    w.apply(GP3).await.unwrap();
    w
}

async fn list<T>(c: &Client) -> Vec<T>
where
    T: kube::Resource<DynamicType = ()> + Clone + serde::de::DeserializeOwned + std::fmt::Debug,
{
    Api::<T>::all(c.clone())
        .list(&ListParams::default())
        .await
        .unwrap()
        .items
}

fn phase(p: &Pod) -> &str {
    p.status
        .as_ref()
        .and_then(|s| s.phase.as_deref())
        .unwrap_or("Pending")
}

async fn running(c: &Client, n: usize) -> bool {
    let pods = list::<Pod>(c).await;
    pods.iter().filter(|p| phase(p) == "Running").count() == n
}

#[tokio::test]
async fn a_statefulset_gets_zonal_volumes_attached_before_its_pods_run() {
    let mut w = world().await;
    w.apply(&statefulset(2, "Parallel")).await.unwrap();
    let up = w
        .run_until(SignedDuration::from_mins(4), |c| async move {
            running(&c, 2).await
        })
        .await
        .unwrap();
    assert!(up, "both pods run");
    let pods = list::<Pod>(&w.client).await;
    let names: BTreeSet<String> = pods
        .iter()
        .filter_map(|p| p.metadata.name.clone())
        .collect();
    assert_eq!(names, BTreeSet::from(["db-0".into(), "db-1".into()]));
    let claims = list::<PersistentVolumeClaim>(&w.client).await;
    let nodes = list::<Node>(&w.client).await;
    let pvs = list::<PersistentVolume>(&w.client).await;
    let vas = list::<VolumeAttachment>(&w.client).await;
    for p in &pods {
        let ordinal = p
            .metadata
            .name
            .as_deref()
            .unwrap()
            .trim_start_matches("db-");
        let c = claims
            .iter()
            .find(|c| c.metadata.name.as_deref() == Some(&format!("data-db-{ordinal}")))
            .expect("the pod's claim");
        let pv_name = bound_volume(c).expect("bound");
        let pv = pvs
            .iter()
            .find(|v| v.metadata.name.as_deref() == Some(pv_name))
            .unwrap();
        assert_eq!(
            pv.spec.as_ref().unwrap().csi.as_ref().unwrap().driver,
            EBS_DRIVER
        );
        let node_name = p.spec.as_ref().unwrap().node_name.clone().unwrap();
        let node = nodes
            .iter()
            .find(|n| n.metadata.name.as_deref() == Some(&node_name))
            .unwrap();
        let zone = &node.metadata.labels.as_ref().unwrap()[kerf_labels::ZONE];
        assert_eq!(
            volume_zones(pv),
            Some(vec![zone.clone()]),
            "provisioned in the node's zone"
        );
        let va = vas
            .iter()
            .find(|a| a.spec.source.persistent_volume_name.as_deref() == Some(pv_name))
            .expect("an attachment");
        assert_eq!(va.spec.node_name, node_name);
        assert!(va.status.as_ref().unwrap().attached);
        let created = va.metadata.creation_timestamp.as_ref().unwrap().0;
        let started = p.status.as_ref().unwrap().start_time.as_ref().unwrap().0;
        assert!(
            started >= created + ATTACH_DELAY,
            "started before its volume was attached"
        );
    }
    let csinodes = list::<CSINode>(&w.client).await;
    assert_eq!(csinodes.len(), nodes.len(), "one CSINode per Node");
}

#[tokio::test]
async fn a_deleted_pod_comes_back_with_its_claim_and_scale_down_detaches() {
    let mut w = world().await;
    w.apply(&statefulset(1, "OrderedReady")).await.unwrap();
    let up = w
        .run_until(SignedDuration::from_mins(4), |c| async move {
            running(&c, 1).await
        })
        .await
        .unwrap();
    assert!(up);
    let before = list::<PersistentVolumeClaim>(&w.client).await;
    let api: Api<Pod> = Api::namespaced(w.client.clone(), "default");
    let old_uid = api.get("db-0").await.unwrap().metadata.uid;
    api.delete("db-0", &DeleteParams::default()).await.unwrap();
    let back = w
        .run_until(SignedDuration::from_mins(2), |c| async move {
            let p = Api::<Pod>::namespaced(c, "default")
                .get_opt("db-0")
                .await
                .unwrap();
            p.is_some_and(|p| phase(&p) == "Running" && p.metadata.deletion_timestamp.is_none())
        })
        .await
        .unwrap();
    assert!(back, "db-0 is recreated and runs");
    assert_ne!(api.get("db-0").await.unwrap().metadata.uid, old_uid);
    let after = list::<PersistentVolumeClaim>(&w.client).await;
    assert_eq!(
        before
            .iter()
            .map(|c| c.metadata.uid.clone())
            .collect::<Vec<_>>(),
        after
            .iter()
            .map(|c| c.metadata.uid.clone())
            .collect::<Vec<_>>(),
        "the same claim, kept across the pod's deletion"
    );
    w.apply(&statefulset(0, "OrderedReady")).await.unwrap();
    let detached = w
        .run_until(SignedDuration::from_mins(1), |c| async move {
            list::<VolumeAttachment>(&c).await.is_empty()
        })
        .await
        .unwrap();
    assert!(detached, "the attachment goes once the pod is gone");
    assert_eq!(
        list::<PersistentVolumeClaim>(&w.client).await.len(),
        1,
        "claims are kept"
    );
}

fn immediate(name: &str, zone: &str) -> String {
    format!(
        "apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {{name: {name}}}
provisioner: ebs.csi.aws.com
volumeBindingMode: Immediate
allowedTopologies:
  - matchLabelExpressions: [{{key: topology.kubernetes.io/zone, values: [{zone}]}}]
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {{name: {name}, namespace: default}}
spec:
  accessModes: [ReadWriteOnce]
  storageClassName: {name}
  resources: {{requests: {{storage: 10Gi}}}}
"
    )
}

fn small_pod(name: &str, claim: Option<&str>, zone: Option<&str>) -> String {
    let mut v = json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"containers": [{"name": "c", "image": "pause",
            "resources": {"requests": {"cpu": "100m"}}}]}});
    if let Some(c) = claim {
        v["spec"]["volumes"] = json!([{"name": "data", "persistentVolumeClaim": {"claimName": c}}]);
    }
    if let Some(z) = zone {
        v["spec"]["nodeSelector"] = json!({kerf_labels::ZONE: z});
    }
    v.to_string()
}

async fn zone_of_pod(c: &Client, name: &str) -> String {
    let p = Api::<Pod>::namespaced(c.clone(), "default")
        .get(name)
        .await
        .unwrap();
    let node = p.spec.unwrap().node_name.unwrap();
    let n = Api::<Node>::all(c.clone()).get(&node).await.unwrap();
    n.metadata.labels.unwrap()[kerf_labels::ZONE].clone()
}

#[tokio::test]
async fn an_immediate_claim_is_provisioned_at_once_in_the_classes_zone() {
    let mut w = world().await;
    w.apply(&immediate("io2", "us-west-2c")).await.unwrap();
    w.tick().await.unwrap();
    let pvs = list::<PersistentVolume>(&w.client).await;
    assert_eq!(pvs.len(), 1);
    assert_eq!(volume_zones(&pvs[0]), Some(vec!["us-west-2c".to_string()]));
    let c = Api::<PersistentVolumeClaim>::namespaced(w.client.clone(), "default")
        .get("io2")
        .await
        .unwrap();
    assert_eq!(bound_volume(&c), pvs[0].metadata.name.as_deref());
    assert_eq!(c.status.unwrap().phase.as_deref(), Some("Bound"));
}

#[tokio::test]
async fn pods_go_only_to_nodes_in_their_volumes_zone() {
    let mut w = world().await;
    for (name, zone) in [("pin-a", "us-west-2a"), ("pin-c", "us-west-2c")] {
        w.apply(&small_pod(name, None, Some(zone))).await.unwrap();
    }
    let up = w
        .run_until(SignedDuration::from_mins(4), |c| async move {
            running(&c, 2).await
        })
        .await
        .unwrap();
    assert!(up, "a node in each zone");
    w.apply(&immediate("in-a", "us-west-2a")).await.unwrap();
    w.apply(&immediate("in-c", "us-west-2c")).await.unwrap();
    w.apply(&small_pod("uses-a", Some("in-a"), None))
        .await
        .unwrap();
    w.apply(&small_pod("uses-c", Some("in-c"), None))
        .await
        .unwrap();
    let up = w
        .run_until(SignedDuration::from_mins(2), |c| async move {
            running(&c, 4).await
        })
        .await
        .unwrap();
    assert!(up, "both volume pods run on the existing nodes");
    assert_eq!(zone_of_pod(&w.client, "uses-a").await, "us-west-2a");
    assert_eq!(zone_of_pod(&w.client, "uses-c").await, "us-west-2c");
}

/// A pod of the `web` zone spread (maxSkew 1, DoNotSchedule) using `claim`.
fn spread_pod(name: &str, claim: &str) -> String {
    let mut v: serde_json::Value =
        serde_json::from_str(&small_pod(name, Some(claim), None)).unwrap();
    v["metadata"]["labels"] = json!({"app": "web"});
    v["spec"]["topologySpreadConstraints"] = json!([{"maxSkew": 1,
        "topologyKey": kerf_labels::ZONE, "whenUnsatisfiable": "DoNotSchedule",
        "labelSelector": {"matchLabels": {"app": "web"}}}]);
    v.to_string()
}

#[tokio::test]
async fn a_volume_zone_narrows_the_node_not_the_spread_domains() {
    let mut w = world().await;
    for (name, zone) in [
        ("pin-a", "us-west-2a"),
        ("pin-b", "us-west-2b"),
        ("pin-c", "us-west-2c"),
    ] {
        w.apply(&small_pod(name, None, Some(zone))).await.unwrap();
    }
    let up = w
        .run_until(SignedDuration::from_mins(4), |c| async move {
            running(&c, 3).await
        })
        .await
        .unwrap();
    assert!(up, "a node in each zone");
    w.apply(&immediate("first", "us-west-2a")).await.unwrap();
    w.apply(&immediate("second", "us-west-2a")).await.unwrap();
    w.apply(&spread_pod("web-1", "first")).await.unwrap();
    let up = w
        .run_until(SignedDuration::from_mins(2), |c| async move {
            running(&c, 4).await
        })
        .await
        .unwrap();
    assert!(up, "the first spread pod runs beside its volume");
    assert_eq!(zone_of_pod(&w.client, "web-1").await, "us-west-2a");
    // A second pod in zone a would skew the spread to 2 over zones b and c, which stay
    // domains although its volume rules them out: it waits, as kube-scheduler has it.
    w.apply(&spread_pod("web-2", "second")).await.unwrap();
    w.run_for(SignedDuration::from_mins(2)).await.unwrap();
    let p = Api::<Pod>::namespaced(w.client.clone(), "default")
        .get("web-2")
        .await
        .unwrap();
    assert_eq!(
        p.spec.and_then(|s| s.node_name),
        None,
        "web-2 stays pending"
    );
}
