//! The simulated EBS CSI driver: attach limits, CSINodes, the scheduler's volume rules, and
//! in a running world provisioning, attach before start and detach after the last pod.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeSet;

use jiff::SignedDuration;
use k8s_openapi::api::core::v1::{Node, PersistentVolume, PersistentVolumeClaim, Pod};
use k8s_openapi::api::storage::v1::{CSINode, StorageClass, VolumeAttachment};
use kerf_catalog::spec::Ec2Spec;
use kube::Client;
use kube::api::{Api, DeleteParams, ListParams};
use serde_json::{Value, json};

use super::attach::{ATTACH_DELAY, csinode_for, ready_to_start};
use super::limits::sim_ebs_attach_limit;
use super::placement::{constrain, exceeds_limit, node_claims, pod_volumes};
use super::*;
use crate::world::{World, WorldOptions};

fn obj<T: serde::de::DeserializeOwned>(v: Value) -> T {
    serde_json::from_value(v).unwrap()
}

fn spec(hypervisor: Option<&str>, enis: u32) -> Ec2Spec {
    let mut s: Ec2Spec = obj(json!({"name": "x.large", "vcpus": 2, "memoryMiB": 8192}));
    s.hypervisor = hypervisor.map(str::to_string);
    s.max_enis = Some(enis);
    s
}

#[test]
fn attach_limits_leave_room_for_enis_and_the_root_volume() {
    assert_eq!(sim_ebs_attach_limit(&spec(Some("nitro"), 3)), 24);
    assert_eq!(sim_ebs_attach_limit(&spec(Some("nitro"), 15)), 12);
    assert_eq!(sim_ebs_attach_limit(&spec(Some("xen"), 4)), 38);
    assert_eq!(sim_ebs_attach_limit(&spec(None, 4)), 38);
}

#[test]
fn a_csinode_carries_the_ebs_driver_and_its_limit() {
    let n: Node = obj(json!({"metadata": {"name": "n1", "uid": "u1",
        "labels": {"node.kubernetes.io/instance-type": "m5.large"}},
        "spec": {"providerID": "aws:///us-west-2a/i-0abc"}}));
    let c = csinode_for(&n);
    let d = &c.spec.drivers[0];
    assert_eq!(d.name, EBS_DRIVER);
    assert_eq!(d.node_id, "i-0abc");
    // m5.large: Nitro, 3 ENIs.
    assert_eq!(d.allocatable.as_ref().unwrap().count, Some(24));
    assert_eq!(c.metadata.owner_references.unwrap()[0].name, "n1");
}

fn class(name: &str, mode: &str, zones: &[&str]) -> StorageClass {
    let mut v = json!({"metadata": {"name": name}, "provisioner": EBS_DRIVER,
        "volumeBindingMode": mode});
    if !zones.is_empty() {
        v["allowedTopologies"] =
            json!([{"matchLabelExpressions": [{"key": kerf_labels::ZONE, "values": zones}]}]);
    }
    obj(v)
}

fn claim(name: &str, class: &str, volume: Option<&str>) -> PersistentVolumeClaim {
    obj(json!({"metadata": {"name": name, "namespace": "db"},
        "spec": {"storageClassName": class, "volumeName": volume,
            "accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "10Gi"}}}}))
}

fn pod(name: &str, claims: &[&str], node: Option<&str>) -> Pod {
    let volumes: Vec<Value> = claims
        .iter()
        .map(|c| json!({"name": c, "persistentVolumeClaim": {"claimName": c}}))
        .collect();
    obj(json!({"metadata": {"name": name, "namespace": "db"},
        "spec": {"containers": [{"name": "c", "image": "i"}], "volumes": volumes,
            "nodeName": node}}))
}

fn volumes(classes: &[StorageClass], claims: &[PersistentVolumeClaim], zone: &str) -> Volumes {
    let mut v = Volumes::default();
    for c in classes {
        v.classes
            .insert(c.metadata.name.clone().unwrap(), c.clone());
    }
    for c in claims {
        let key = ("db".to_string(), c.metadata.name.clone().unwrap());
        v.claims.insert(key, c.clone());
        if let Some(pv) = bound_volume(c) {
            let owner = classes
                .iter()
                .find(|k| Some(k.metadata.name.as_deref().unwrap()) == claim_class(c))
                .unwrap();
            let mut c = c.clone();
            c.metadata.uid = Some(pv.trim_start_matches("pvc-").into());
            v.volumes
                .insert(pv.into(), provision::volume_for(&c, owner, zone));
        }
    }
    v
}

#[test]
fn a_bound_volume_pins_the_pod_to_its_zone() {
    let gp3 = class("gp3", "WaitForFirstConsumer", &[]);
    let v = volumes(&[gp3], &[claim("data", "gp3", Some("pvc-1"))], "us-west-2b");
    let need = pod_volumes(&v, &pod("db-0", &["data"], None)).unwrap();
    assert_eq!(need.zones, Some(BTreeSet::from(["us-west-2b".to_string()])));
    assert_eq!(need.ebs.len(), 1);
    assert!(need.consumer.is_empty());
    let placed = constrain(&pod("db-0", &["data"], None), need.zones.as_ref(), &[]);
    let aff = placed
        .spec
        .unwrap()
        .affinity
        .unwrap()
        .node_affinity
        .unwrap();
    let terms = aff
        .required_during_scheduling_ignored_during_execution
        .unwrap()
        .node_selector_terms;
    let e = &terms[0].match_expressions.as_ref().unwrap()[0];
    assert_eq!(
        (e.key.as_str(), e.operator.as_str()),
        (kerf_labels::ZONE, "In")
    );
    assert_eq!(e.values, Some(vec!["us-west-2b".to_string()]));
}

#[test]
fn constraints_are_added_to_every_term_of_the_pods_own_affinity() {
    let mut p = pod("db-0", &[], None);
    p.spec.as_mut().unwrap().affinity = Some(obj(json!({"nodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": "a", "operator": "Exists"}]},
            {"matchExpressions": [{"key": "b", "operator": "Exists"}]}]}}})));
    let zones = BTreeSet::from(["z".to_string()]);
    let placed = constrain(&p, Some(&zones), &["full".to_string()]);
    let terms = placed
        .spec
        .unwrap()
        .affinity
        .unwrap()
        .node_affinity
        .unwrap()
        .required_during_scheduling_ignored_during_execution
        .unwrap()
        .node_selector_terms;
    for t in &terms {
        let keys: Vec<&str> = t
            .match_expressions
            .iter()
            .flatten()
            .map(|e| e.key.as_str())
            .collect();
        assert_eq!(keys[1..], [kerf_labels::ZONE, kerf_labels::HOSTNAME]);
    }
}

#[test]
fn unbound_immediate_and_missing_claims_keep_the_pod_pending() {
    let io2 = class("io2", "Immediate", &[]);
    let v = volumes(&[io2], &[claim("data", "io2", None)], "z");
    let why = pod_volumes(&v, &pod("db-0", &["data"], None)).unwrap_err();
    assert_eq!(why, "pod has unbound immediate PersistentVolumeClaims");
    let why = pod_volumes(&v, &pod("db-1", &["other"], None)).unwrap_err();
    assert!(why.contains("\"other\" not found"), "{why}");
}

#[test]
fn a_waiting_claim_follows_the_classes_allowed_zones() {
    let gp3 = class("gp3", "WaitForFirstConsumer", &["us-west-2c"]);
    let v = volumes(&[gp3], &[claim("data", "gp3", None)], "z");
    let need = pod_volumes(&v, &pod("db-0", &["data"], None)).unwrap();
    assert_eq!(need.zones, Some(BTreeSet::from(["us-west-2c".to_string()])));
    assert_eq!(need.consumer, [("db".to_string(), "data".to_string())]);
}

#[test]
fn the_attach_limit_counts_unique_claims_per_node() {
    let gp3 = class("gp3", "WaitForFirstConsumer", &[]);
    let claims: Vec<_> = ["a", "b", "c"]
        .iter()
        .map(|c| claim(c, "gp3", Some(&format!("pvc-{c}"))))
        .collect();
    let mut v = volumes(&[gp3], &claims, "z");
    let csinode: CSINode = obj(json!({"metadata": {"name": "n1"}, "spec": {"drivers": [
        {"name": EBS_DRIVER, "nodeID": "i-1", "allocatable": {"count": 2}}]}}));
    v.csinodes.insert("n1".into(), csinode);
    // Two pods share claim "a": one attachment.
    let bound = [pod("p1", &["a"], Some("n1")), pod("p2", &["a"], Some("n1"))];
    let counts = node_claims(&v, &bound);
    assert_eq!(counts["n1"].len(), 1);
    let one_more = pod_volumes(&v, &pod("p3", &["b"], None)).unwrap();
    assert!(!exceeds_limit(&v, &counts, "n1", &one_more));
    let two_more = pod_volumes(&v, &pod("p4", &["b", "c"], None)).unwrap();
    assert!(exceeds_limit(&v, &counts, "n1", &two_more));
    // A node without a CSINode has no known limit.
    assert!(!exceeds_limit(&v, &counts, "n2", &two_more));
}

#[test]
fn a_pod_starts_only_once_its_volumes_are_attached() {
    let gp3 = class("gp3", "WaitForFirstConsumer", &[]);
    let mut v = volumes(&[gp3], &[claim("data", "gp3", Some("pvc-1"))], "z");
    let p = pod("db-0", &["data"], Some("n1"));
    assert!(!ready_to_start(&v, &p, "n1"));
    let mut a: VolumeAttachment = obj(json!({"metadata": {"name": "csi-x"},
        "spec": {"attacher": EBS_DRIVER, "nodeName": "n1",
            "source": {"persistentVolumeName": "pvc-1"}}}));
    v.attachments.push(a.clone());
    assert!(!ready_to_start(&v, &p, "n1"), "not attached yet");
    a.status = Some(obj(json!({"attached": true})));
    v.attachments = vec![a];
    assert!(ready_to_start(&v, &p, "n1"));
    assert!(!ready_to_start(&v, &p, "n2"), "attached elsewhere");
}

// --- in a running world ---

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
