#![allow(clippy::unwrap_used)]

use std::cell::RefCell;

use serde_json::json;

use super::*;

fn from<T: k8s_openapi::serde::de::DeserializeOwned>(v: serde_json::Value) -> T {
    serde_json::from_value(v).unwrap()
}

#[test]
fn the_snapshot_storage_gives_pods_their_volumes_and_nodes_their_limits() {
    let snap = Snapshot {
        persistent_volume_claims: vec![from(json!({
            "metadata": {"name": "data", "namespace": "db"},
            "spec": {"storageClassName": "gp3"},
        }))],
        storage_classes: vec![
            from(
                json!({"metadata": {"name": "gp3"}, "provisioner": "ebs.csi.aws.com",
                "volumeBindingMode": "WaitForFirstConsumer",
                "allowedTopologies": [{"matchLabelExpressions": [
                    {"key": "topology.kubernetes.io/zone", "values": ["us-west-2a"]}]}]}),
            ),
            from(json!({"metadata": {"name": "odd"}, "provisioner": "x",
                "volumeBindingMode": "Later"})),
        ],
        csi_nodes: vec![from(
            json!({"metadata": {"name": "n1"}, "spec": {"drivers": [
            {"name": "ebs.csi.aws.com", "nodeID": "i-1", "allocatable": {"count": 20}}]}}),
        )],
        ..Default::default()
    };
    let warned = RefCell::new(Vec::new());
    let warn = |kind: &str, name: &str, _: &dyn std::fmt::Display| {
        warned.borrow_mut().push(format!("{kind}/{name}"));
    };
    let storage = storage(&snap, &warn);
    assert_eq!(*warned.borrow(), vec!["StorageClass/odd".to_string()]);
    let pod: k8s_openapi::api::core::v1::Pod = from(json!({
        "metadata": {"name": "db-0", "namespace": "db"},
        "spec": {"containers": [], "volumes": [
            {"name": "d", "persistentVolumeClaim": {"claimName": "data"}}]},
    }));
    let mut ep = kerf_convert::pod::pod(&pod).unwrap();
    resolve(&storage, &pod, &mut ep);
    assert_eq!(ep.volumes.topology[0].claim, "db/data");
    assert_eq!(ep.volumes.attached[0].driver, "ebs.csi.aws.com");
    assert_eq!(limits(&snap, &warn)["n1"]["ebs.csi.aws.com"], 20);
}
