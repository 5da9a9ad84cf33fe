#![allow(clippy::unwrap_used, clippy::expect_used)]

use k8s_openapi::api::core::v1::PersistentVolumeClaim;
use kube::api::{Api, PostParams};
use serde_json::json;

use crate::Sim;

fn class(name: &str, default: Option<&str>) -> serde_json::Value {
    let mut c = json!({"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
        "metadata": {"name": name}, "provisioner": "ebs.csi.aws.com"});
    if let Some(a) = default {
        c["metadata"]["annotations"] = json!({a: "true"});
    }
    c
}

async fn claim_class(client: &kube::Client, name: &str, class: Option<&str>) -> Option<String> {
    let mut spec = json!({"accessModes": ["ReadWriteOnce"],
        "resources": {"requests": {"storage": "1Gi"}}});
    if let Some(c) = class {
        spec["storageClassName"] = json!(c);
    }
    let pvc: PersistentVolumeClaim = serde_json::from_value(json!({
        "metadata": {"name": name, "namespace": "default"}, "spec": spec}))
    .unwrap();
    let api: Api<PersistentVolumeClaim> = Api::namespaced(client.clone(), "default");
    let made = api.create(&PostParams::default(), &pvc).await.unwrap();
    made.spec.unwrap().storage_class_name
}

#[tokio::test]
async fn a_claim_without_a_class_gets_the_default_one() {
    let sim = Sim::start().await.unwrap();
    let client = sim.client().unwrap();
    assert_eq!(
        claim_class(&client, "before", None).await,
        None,
        "no default class yet"
    );
    sim.seed(class("gp2", None)).unwrap();
    sim.seed(class(
        "gp3",
        Some("storageclass.kubernetes.io/is-default-class"),
    ))
    .unwrap();
    assert_eq!(
        claim_class(&client, "plain", None).await.as_deref(),
        Some("gp3")
    );
    // A class named, or none asked for with "", is left as it is.
    assert_eq!(
        claim_class(&client, "named", Some("gp2")).await.as_deref(),
        Some("gp2")
    );
    assert_eq!(
        claim_class(&client, "none", Some("")).await.as_deref(),
        Some("")
    );
}

#[tokio::test]
async fn among_several_defaults_the_first_by_name_of_the_newest_wins() {
    let sim = Sim::start().await.unwrap();
    let client = sim.client().unwrap();
    let beta = Some("storageclass.beta.kubernetes.io/is-default-class");
    for (name, created) in [
        ("aa", "2020-01-01T00:00:00Z"),
        ("zz", "2024-01-01T00:00:00Z"),
        ("mm", "2024-01-01T00:00:00Z"),
    ] {
        let mut c = class(name, beta);
        c["metadata"]["creationTimestamp"] = json!(created);
        sim.seed(c).unwrap();
    }
    assert_eq!(claim_class(&client, "c", None).await.as_deref(), Some("mm"));
}
