//! Helpers shared by the sim's integration tests.
#![allow(dead_code)]

use k8s_openapi::api::core::v1::{Node, Pod};
use kerf_sim::Sim;
use kube::api::{Api, ApiResource, DynamicObject, PostParams};
use kube::{Client, Resource};
use serde_json::{Value, json};

/// Starts a sim and a client for it.
pub async fn start() -> (Sim, Client) {
    let sim = Sim::start().await.unwrap();
    let client = sim.client().unwrap();
    (sim, client)
}

/// The Status of a failed call.
pub fn status(e: kube::Error) -> kube::core::Status {
    match e {
        kube::Error::Api(s) => *s,
        other => panic!("expected an API error, got {other:?}"),
    }
}

/// A node with labels.
pub fn node(name: &str, labels: Value) -> Node {
    serde_json::from_value(json!({"metadata": {"name": name, "labels": labels}})).unwrap()
}

/// A pod on a node with labels.
pub fn pod(name: &str, node: &str, labels: Value) -> Pod {
    serde_json::from_value(json!({"metadata": {"name": name, "labels": labels},
        "spec": {"nodeName": node, "containers": [{"name": "c", "image": "busybox"}]}}))
    .unwrap()
}

/// A running, Ready pod stored directly (as a kubelet would leave it).
pub fn seed_running_pod(sim: &Sim, ns: &str, name: &str, labels: Value) {
    sim.seed(json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": ns, "labels": labels},
        "spec": {"nodeName": "n1", "containers": [{"name": "c", "image": "busybox"}]},
        "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}}))
        .unwrap();
}

/// A dynamic API for a kerf-api custom resource.
pub fn dynamic<K: Resource<DynamicType = ()>>(client: &Client) -> Api<DynamicObject> {
    Api::all_with(client.clone(), &ApiResource::erase::<K>(&()))
}

/// A valid NodePool document.
pub fn nodepool(name: &str) -> Value {
    json!({"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": {"name": name},
        "spec": {"template": {"spec": {
            "requirements": [{"key": "kubernetes.io/arch", "operator": "In", "values": ["amd64"]}],
            "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"}}}}})
}

/// Creates a dynamic object from JSON.
pub async fn create_dynamic(
    api: &Api<DynamicObject>,
    v: Value,
) -> Result<DynamicObject, kube::Error> {
    api.create(&PostParams::default(), &serde_json::from_value(v).unwrap())
        .await
}

/// A valid EC2NodeClass document.
pub fn ec2nodeclass(name: &str) -> Value {
    let terms = json!([{"tags": {"karpenter.sh/discovery": "demo"}}]);
    json!({"apiVersion": "karpenter.k8s.aws/v1", "kind": "EC2NodeClass", "metadata": {"name": name},
        "spec": {"role": "KarpenterNodeRole-demo", "amiSelectorTerms": [{"alias": "al2023@latest"}],
            "subnetSelectorTerms": terms, "securityGroupSelectorTerms": terms}})
}

/// Creating `doc` fails with 422 Invalid and a FieldValueInvalid cause `(field, message)`;
/// returns all the causes.
pub async fn rejected(
    api: &Api<DynamicObject>,
    doc: Value,
    field: &str,
    message: &str,
) -> Vec<kube::core::response::StatusCause> {
    let e = status(create_dynamic(api, doc).await.unwrap_err());
    assert_eq!(
        (e.code, e.reason.as_str()),
        (422, "Invalid"),
        "{}",
        e.message
    );
    let causes = e.details.unwrap().causes;
    assert!(
        causes
            .iter()
            .any(|c| c.reason == "FieldValueInvalid" && c.field == field && c.message == message),
        "({field}, {message}) not in {causes:#?}"
    );
    causes
}

/// A GET that asks for a server-side Table, as `kubectl get` does.
pub fn table_get(path: &str) -> axum::http::Request<Vec<u8>> {
    axum::http::Request::get(path)
        .header(
            "accept",
            "application/json;as=Table;v=v1;g=meta.k8s.io,application/json",
        )
        .body(Vec::new())
        .unwrap()
}
