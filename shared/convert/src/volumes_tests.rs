#![allow(clippy::unwrap_used)]

use serde_json::json;

use super::*;

fn from<T: k8s_openapi::serde::de::DeserializeOwned>(v: serde_json::Value) -> T {
    serde_json::from_value(v).unwrap()
}

fn claim(name: &str, volume: Option<&str>, class: Option<&str>) -> core::PersistentVolumeClaim {
    from(json!({
        "metadata": {"name": name, "namespace": "db"},
        "spec": {"volumeName": volume, "storageClassName": class},
    }))
}

fn zonal_volume(name: &str, zone: &str, key: &str) -> core::PersistentVolume {
    from(json!({
        "metadata": {"name": name},
        "spec": {
            "csi": {"driver": "ebs.csi.aws.com", "volumeHandle": "vol-1"},
            "nodeAffinity": {"required": {"nodeSelectorTerms": [
                {"matchExpressions": [{"key": key, "operator": "In", "values": [zone]}]}
            ]}},
        },
    }))
}

fn class(name: &str, mode: &str, zones: &[&str]) -> storage::StorageClass {
    from(json!({
        "metadata": {"name": name},
        "provisioner": "ebs.csi.aws.com",
        "volumeBindingMode": mode,
        "allowedTopologies": [{"matchLabelExpressions": [
            {"key": "topology.ebs.csi.aws.com/zone", "values": zones}
        ]}],
    }))
}

fn pod_using(volumes: serde_json::Value, node: Option<&str>) -> (Pod, Vec<ClaimRef>) {
    let p: core::Pod = from(json!({
        "metadata": {"name": "web-0", "namespace": "db"},
        "spec": {"containers": [], "volumes": volumes, "nodeName": node},
    }));
    let refs = claim_refs(p.spec.as_ref().unwrap(), "web-0");
    (crate::pod::pod(&p).unwrap(), refs)
}

fn pvc_volume(claim: &str) -> serde_json::Value {
    json!([{"name": "data", "persistentVolumeClaim": {"claimName": claim}}])
}

fn zones(v: &PodVolumes) -> Vec<Vec<String>> {
    v.topology[0]
        .alternatives
        .iter()
        .map(|t| t.iter().flat_map(|r| r.values.clone()).collect())
        .collect()
}

fn resolved(s: &Storage, volumes: serde_json::Value, node: Option<&str>) -> PodVolumes {
    let (mut pod, refs) = pod_using(volumes, node);
    s.resolve(&mut pod, &refs);
    pod.volumes
}

#[test]
fn a_bound_claim_takes_its_volume_node_affinity_and_driver() {
    let mut s = Storage::default();
    s.add_claim(&claim("data", Some("pv-1"), Some("gp3")))
        .unwrap();
    s.add_volume(&zonal_volume(
        "pv-1",
        "us-west-2a",
        "topology.ebs.csi.aws.com/zone",
    ))
    .unwrap();
    let v = resolved(&s, pvc_volume("data"), None);
    assert_eq!(v.wait, None);
    assert_eq!(v.topology[0].claim, "db/data");
    assert_eq!(
        v.topology[0].alternatives[0][0].key,
        "topology.kubernetes.io/zone"
    );
    assert_eq!(zones(&v), vec![vec!["us-west-2a".to_string()]]);
    assert_eq!(
        v.attached,
        vec![AttachedVolume {
            driver: EBS_CSI_DRIVER.into(),
            claim: "db/data".into()
        }]
    );
}

#[test]
fn an_unbound_wait_for_first_consumer_claim_takes_the_allowed_topologies() {
    let mut s = Storage::default();
    s.add_claim(&claim("data", None, Some("gp3"))).unwrap();
    s.add_class(&class(
        "gp3",
        "WaitForFirstConsumer",
        &["us-west-2b", "us-west-2c"],
    ))
    .unwrap();
    let v = resolved(&s, pvc_volume("data"), None);
    assert_eq!(v.wait, None);
    assert_eq!(
        zones(&v),
        vec![vec!["us-west-2b".to_string(), "us-west-2c".to_string()]]
    );
    assert_eq!(v.topology[0].alternatives[0][0].operator, Operator::In);
}

#[test]
fn claims_that_are_not_ready_make_the_pod_wait() {
    let mut s = Storage::default();
    s.add_class(&class("fast", "Immediate", &[])).unwrap();
    s.add_claim(&claim("now", None, Some("fast"))).unwrap();
    s.add_claim(&claim("gone", Some("pv-x"), None)).unwrap();
    s.add_claim(&claim("nameless", None, None)).unwrap();
    s.add_claim(&claim("typo", None, Some("slow"))).unwrap();
    let wait = |c: &str| resolved(&s, pvc_volume(c), None).wait.unwrap();
    assert_eq!(
        wait("now").kind,
        VolumeWaitKind::ImmediateUnbound {
            class: "fast".into()
        }
    );
    assert_eq!(
        wait("gone").kind,
        VolumeWaitKind::MissingVolume {
            volume: "pv-x".into()
        }
    );
    assert_eq!(wait("nameless").kind, VolumeWaitKind::NoStorageClass);
    assert_eq!(
        wait("typo").kind,
        VolumeWaitKind::MissingStorageClass {
            class: "slow".into()
        }
    );
    let missing = wait("absent");
    assert_eq!(missing.kind, VolumeWaitKind::MissingClaim);
    assert_eq!(missing.claim, "db/absent");
    assert!(missing.to_string().contains("db/absent"), "{missing}");
}

#[test]
fn an_ephemeral_volume_uses_its_template_class_until_the_claim_exists() {
    let mut s = Storage::default();
    s.add_class(&class("gp3", "WaitForFirstConsumer", &["us-west-2a"]))
        .unwrap();
    let eph = json!([{"name": "scratch", "ephemeral": {"volumeClaimTemplate": {
        "spec": {"storageClassName": "gp3", "accessModes": ["ReadWriteOnce"]}
    }}}]);
    let v = resolved(&s, eph.clone(), None);
    assert_eq!(v.topology[0].claim, "db/web-0-scratch");
    assert_eq!(zones(&v), vec![vec!["us-west-2a".to_string()]]);
    // Once created and bound, its volume decides; on a bound pod it pins nothing.
    s.add_claim(&claim("web-0-scratch", Some("pv-e"), Some("gp3")))
        .unwrap();
    s.add_volume(&zonal_volume(
        "pv-e",
        "us-west-2c",
        "topology.kubernetes.io/zone",
    ))
    .unwrap();
    assert_eq!(
        zones(&resolved(&s, eph.clone(), None)),
        vec![vec!["us-west-2c".to_string()]]
    );
    let on_node = resolved(&s, eph, Some("n1"));
    assert!(on_node.topology.is_empty());
    assert_eq!(on_node.attached.len(), 1, "still attached where it runs");
}

#[test]
fn in_tree_ebs_counts_as_the_ebs_csi_driver_and_local_volumes_lose_their_hostname() {
    let mut s = Storage::default();
    s.add_claim(&claim("old", Some("pv-old"), None)).unwrap();
    s.add_volume(&from(json!({
        "metadata": {"name": "pv-old"},
        "spec": {"awsElasticBlockStore": {"volumeID": "vol-2"}},
    })))
    .unwrap();
    let v = resolved(&s, pvc_volume("old"), None);
    assert_eq!(v.attached[0].driver, EBS_CSI_DRIVER);
    assert!(v.topology.is_empty());
    s.add_claim(&claim("loc", Some("pv-loc"), None)).unwrap();
    s.add_volume(&from(json!({
        "metadata": {"name": "pv-loc"},
        "spec": {"local": {"path": "/mnt"}, "nodeAffinity": {"required": {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": "kubernetes.io/hostname", "operator": "In", "values": ["n1"]}]}
        ]}}},
    })))
    .unwrap();
    let v = resolved(&s, pvc_volume("loc"), None);
    assert!(v.topology.is_empty() && v.attached.is_empty(), "{v:?}");
}

#[test]
fn bad_objects_name_the_field() {
    let mut s = Storage::default();
    let e = s.add_class(&class("x", "Sometimes", &[])).unwrap_err();
    assert_eq!(e.field, "volumeBindingMode");
    let mut bad = zonal_volume("pv", "a", "topology.kubernetes.io/zone");
    let spec = bad.spec.as_mut().unwrap();
    let terms = &mut spec
        .node_affinity
        .as_mut()
        .unwrap()
        .required
        .as_mut()
        .unwrap();
    terms.node_selector_terms[0]
        .match_expressions
        .as_mut()
        .unwrap()[0]
        .operator = "Near".into();
    let e = s.add_volume(&bad).unwrap_err();
    assert!(
        e.field
            .starts_with("spec.nodeAffinity.required.nodeSelectorTerms[0].matchExpressions[0]"),
        "{e}"
    );
}

#[test]
fn csinode_counts_become_node_limits() {
    let c: storage::CSINode = from(json!({
        "metadata": {"name": "n1"},
        "spec": {"drivers": [
            {"name": "ebs.csi.aws.com", "nodeID": "i-1", "allocatable": {"count": 25}},
            {"name": "efs.csi.aws.com", "nodeID": "i-1"},
        ]},
    }));
    let (node, limits) = csi_limits(&c).unwrap();
    assert_eq!(node, "n1");
    assert_eq!(limits, [(EBS_CSI_DRIVER.to_string(), 25)].into());
    let mut nodes = vec![Node {
        name: "n1".into(),
        ..Default::default()
    }];
    apply_limits(&mut nodes, &[(node, limits)].into());
    assert_eq!(nodes[0].volume_limits[EBS_CSI_DRIVER], 25);
}
