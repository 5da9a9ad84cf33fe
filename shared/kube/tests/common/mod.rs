//! Fixtures for kerf-kube's tests against the in-process API server.
#![allow(dead_code)]

use kerf_api::v1::{EC2NodeClass, NodeClaim, NodePool};
use kerf_sim::Sim;
use kube::Client;
use kube::api::{Api, PostParams};
use serde_json::{Value, json};

/// A sim and a client for it.
pub async fn start() -> (Sim, Client) {
    let sim = Sim::start().await.unwrap();
    let client = sim.client().unwrap();
    (sim, client)
}

/// The Cluster port on `client`.
pub fn cluster(client: &Client) -> kerf_kube::KubeCluster {
    kerf_kube::KubeCluster::new(client.clone(), "kerf")
}

/// NodeClass reference used everywhere.
pub fn class_ref() -> Value {
    json!({"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"})
}

/// A NodePool through the API (validated by the sim).
pub async fn create_pool(client: &Client, name: &str) -> NodePool {
    let np: NodePool =
        serde_json::from_value(json!({"apiVersion": "karpenter.sh/v1", "kind": "NodePool",
        "metadata": {"name": name},
        "spec": {"template": {"spec": {"requirements": [
            {"key": "kubernetes.io/arch", "operator": "In", "values": ["amd64"]}],
            "nodeClassRef": class_ref()}}}}))
        .unwrap();
    Api::<NodePool>::all(client.clone())
        .create(&PostParams::default(), &np)
        .await
        .unwrap()
}

/// An EC2NodeClass through the API.
pub async fn create_class(client: &Client) -> EC2NodeClass {
    let c: EC2NodeClass = serde_json::from_value(json!({"apiVersion": "karpenter.k8s.aws/v1",
        "kind": "EC2NodeClass", "metadata": {"name": "default"},
        "spec": {"role": "KarpenterNodeRole",
            "amiSelectorTerms": [{"alias": "al2023@latest"}],
            "subnetSelectorTerms": [{"tags": {"karpenter.sh/discovery": "demo"}}],
            "securityGroupSelectorTerms": [{"tags": {"karpenter.sh/discovery": "demo"}}]}}))
    .unwrap();
    Api::<EC2NodeClass>::all(client.clone())
        .create(&PostParams::default(), &c)
        .await
        .unwrap()
}

/// A NodeClaim body (not yet created).
pub fn claim() -> NodeClaim {
    serde_json::from_value(json!({"apiVersion": "karpenter.sh/v1", "kind": "NodeClaim",
        "metadata": {}, "spec": {"requirements": [
            {"key": "node.kubernetes.io/instance-type", "operator": "In", "values": ["m5.large"]}],
            "nodeClassRef": class_ref()}}))
    .unwrap()
}

/// Seeds a Running, Ready pod.
pub fn seed_pod(sim: &Sim, ns: &str, name: &str, node: &str, labels: Value, phase: &str) {
    sim.seed(json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": ns, "labels": labels},
        "spec": {"nodeName": node, "containers": [{"name": "c", "image": "busybox"}]},
        "status": {"phase": phase, "conditions": [{"type": "Ready", "status": "True"}]}}))
        .unwrap();
}

/// Seeds a Node.
pub fn seed_node(sim: &Sim, name: &str) {
    sim.seed(json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": name,
        "labels": {"karpenter.sh/nodepool": "default"}}, "spec": {"providerID": format!("aws:///us-east-1a/i-{name}")},
        "status": {"conditions": [{"type": "Ready", "status": "True"}]}}))
    .unwrap();
}
