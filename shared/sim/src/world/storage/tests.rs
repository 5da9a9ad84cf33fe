//! The simulated EBS CSI driver: attach limits, CSINodes, the scheduler's volume rules and
//! when a pod may start.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeSet;

use k8s_openapi::api::core::v1::{Node, PersistentVolumeClaim, Pod};
use k8s_openapi::api::storage::v1::{CSINode, StorageClass, VolumeAttachment};
use kerf_catalog::spec::Ec2Spec;
use serde_json::{Value, json};

use super::attach::{csinode_for, ready_to_start};
use super::limits::sim_ebs_attach_limit;
use super::placement::{self, engine_volumes, exceeds_limit, node_claims, pod_volumes};
use super::*;

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
    assert_eq!(sim_ebs_attach_limit(&spec(Some("nitro"), 3)), Some(24));
    assert_eq!(sim_ebs_attach_limit(&spec(Some("nitro"), 15)), Some(12));
    assert_eq!(sim_ebs_attach_limit(&spec(Some("xen"), 4)), Some(38));
    assert_eq!(sim_ebs_attach_limit(&spec(None, 4)), Some(38));
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
    let facts = engine_volumes(&need);
    let t = &facts.topology[0].alternatives;
    assert_eq!(t.len(), 1, "one alternative: the volume's zones");
    assert_eq!(t[0][0].key, kerf_labels::ZONE);
    assert_eq!(t[0][0].values, ["us-west-2b".to_string()]);
    assert_eq!(
        facts.attached[0].claim, "db/data",
        "the EBS claim counts against the node's attach limit"
    );
    // A pod whose volumes allow any zone gets no volume term.
    let free = engine_volumes(&placement::PodVolumes::default());
    assert!(facts.attached.len() == 1 && free.topology.is_empty() && free.attached.is_empty());
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
