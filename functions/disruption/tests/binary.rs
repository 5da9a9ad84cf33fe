//! The real disruption binary against moto through kerf-aws: started as a process on a local
//! Lambda Runtime API and fed the scheduled event from `events/`, one sweep resolves the
//! EC2NodeClass's status from EC2 and SSM (subnets, security groups, AMIs, `Ready`), stamps
//! Kerf's hashes on a NodeClaim that has none and marks a NodeClaim whose NodePool changed
//! `Drifted`, and records the first command (an empty node) for a later sweep to confirm; the
//! instance-status poll before it finds every instance healthy. A payload that is neither an
//! SQS batch nor a scheduled event fails its invocation with the reason. A feature gate that
//! does not exist stops the start with its variable named.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers outside #[test] fns

use std::path::Path;
use std::time::Duration;

use k8s_openapi::api::core::v1::Node;
use kerf_api::v1::{EC2NodeClass, NodeClaim};
use kerf_e2e::account;
use kerf_e2e::lambda::{Function, RuntimeApi};
use kerf_e2e::world::{condition, getting_started, read};
use kube::api::{Api, Patch, PatchParams, PostParams};
use serde_json::{Value, json};

const LIMIT: Duration = Duration::from_secs(60);

fn fixture(name: &str) -> Value {
    serde_json::from_str(&read(&format!("events/{name}"))).unwrap()
}

/// An initialized NodeClaim of the default pool with `annotations` (and the termination
/// finalizer Kerf gives every NodeClaim, so a deleted one stays until it is terminated).
async fn claim(client: &kube::Client, name: &str, annotations: Value) {
    let claims: Api<NodeClaim> = Api::all(client.clone());
    let c: NodeClaim = serde_json::from_value(json!({"apiVersion": "karpenter.sh/v1",
        "kind": "NodeClaim", "metadata": {"name": name, "annotations": annotations,
            "finalizers": ["karpenter.sh/termination"],
            "labels": {"karpenter.sh/nodepool": "default", "karpenter.sh/capacity-type": "on-demand",
                "node.kubernetes.io/instance-type": "m5.large", "topology.kubernetes.io/zone": "us-west-2a",
                "karpenter.k8s.aws/instance-category": "m", "karpenter.k8s.aws/instance-generation": "5",
                "kubernetes.io/arch": "amd64", "kubernetes.io/os": "linux"}},
        "spec": {"requirements": [{"key": "karpenter.sh/nodepool", "operator": "In", "values": ["default"]}],
            "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"}}}))
    .unwrap();
    claims.create(&PostParams::default(), &c).await.unwrap();
    let t = "2026-11-24T02:00:00Z";
    let conds: Vec<Value> = ["Launched", "Registered", "Initialized"]
        .iter()
        .map(|c| json!({"type": c, "status": "True", "reason": c, "message": "", "lastTransitionTime": t}))
        .collect();
    // A registered claim names its Node (admission no longer records registrations).
    let status = json!({"status": {"providerID": format!("aws:///us-west-2a/i-{name}"),
        "nodeName": format!("ip-{name}"), "conditions": conds}});
    claims
        .patch_status(name, &PatchParams::default(), &Patch::Merge(&status))
        .await
        .unwrap();
    let nodes: Api<Node> = Api::all(client.clone());
    let node: Node = serde_json::from_value(json!({"apiVersion": "v1", "kind": "Node",
        "metadata": {"name": format!("ip-{name}"), "labels": {"karpenter.sh/nodepool": "default",
            "karpenter.sh/registered": "true", "karpenter.sh/initialized": "true",
            "karpenter.sh/capacity-type": "on-demand", "node.kubernetes.io/instance-type": "m5.large",
            "topology.kubernetes.io/zone": "us-west-2a", "kubernetes.io/arch": "amd64",
            "kubernetes.io/os": "linux"}, "finalizers": ["karpenter.sh/termination"]},
        "spec": {"providerID": format!("aws:///us-west-2a/i-{name}")},
        "status": {"conditions": [{"type": "Ready", "status": "True"}],
            "allocatable": {"cpu": "1930m", "memory": "7134Mi", "pods": "29"}}}))
    .unwrap();
    nodes.create(&PostParams::default(), &node).await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_binary_sweeps_node_classes_and_drift_through_ec2_on_moto() {
    let (_guard, moto) = kerf_e2e::moto::fresh().await;
    let acct = account::seed(&moto.url).await;
    let w = getting_started().await.unwrap();
    claim(&w.client, "default-unstamped", json!({})).await;
    let stale = json!({"karpenter.sh/nodepool-hash": "0000000000000000",
        "karpenter.sh/nodepool-hash-version": kerf_labels::KERF_NODEPOOL_HASH_VERSION});
    claim(&w.client, "default-stale", stale).await;

    let api = RuntimeApi::start().await;
    let log = std::env::temp_dir().join(format!("kerf-disruption-{}.log", std::process::id()));
    let _f = Function::start(
        Path::new(env!("CARGO_BIN_EXE_kerf-disruption")),
        &api,
        &acct.env(w.sim().unwrap().url()),
        Some(&log),
    );
    let out = api.invoke(fixture("scheduled-event.json"), LIMIT).await;
    let logs = std::fs::read_to_string(&log).unwrap_or_default();
    let out = out.unwrap_or_else(|e| panic!("{e}\nlogs:\n{logs}"));
    assert_eq!(out["status"], "ok", "{out}\nlogs:\n{logs}");
    assert_eq!(out["drifted"], 1, "{out}\nlogs:\n{logs}");
    // Both nodes are empty; the pool's budget (10% of 2, rounded up) allows one at a time,
    // started at once (emptiness takes no validation wait: its node is tainted and found
    // still empty).
    assert_eq!(out["recorded"], json!([]), "{out}");
    let started = out["started"].as_array().cloned().unwrap_or_default();
    assert_eq!(started.len(), 1, "{out}");
    assert!(
        started[0].as_str().is_some_and(|s| s.starts_with("empty-")),
        "{out}"
    );
    // The instance-status poll ran on moto first: every instance is healthy there.
    assert_eq!(out["unhealthy"], json!([]), "{out}");
    assert!(!logs.contains("instance status"), "{logs}");

    let classes: Api<EC2NodeClass> = Api::all(w.client.clone());
    let class = serde_json::to_value(classes.get("default").await.unwrap()).unwrap();
    let status = &class["status"];
    assert_eq!(
        status["subnets"].as_array().map(Vec::len),
        Some(3),
        "{status}"
    );
    assert_eq!(
        status["securityGroups"].as_array().map(Vec::len),
        Some(1),
        "{status}"
    );
    assert_eq!(status["amis"][0]["id"], account::EKS_AMI, "{status}");
    let ready = status["conditions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["type"] == "Ready")
        .cloned();
    assert_eq!(
        ready.map(|c| c["status"].clone()),
        Some(json!("True")),
        "{status}"
    );

    let claims: Api<NodeClaim> = Api::all(w.client.clone());
    let stamped = claims.get("default-unstamped").await.unwrap();
    let a = stamped.metadata.annotations.clone().unwrap_or_default();
    assert_eq!(
        a.get(kerf_labels::NODEPOOL_HASH_VERSION)
            .map(String::as_str),
        Some(kerf_labels::KERF_NODEPOOL_HASH_VERSION)
    );
    assert!(a.contains_key(kerf_labels::aws::EC2NODECLASS_HASH));
    assert!(
        !condition(&stamped, "Drifted"),
        "a freshly stamped claim has not drifted"
    );
    let drifted = claims.get("default-stale").await.unwrap();
    assert!(condition(&drifted, "Drifted"), "logs:\n{logs}");
    assert!(logs.contains("marked nodeclaim as drifted"), "{logs}");
}

/// A start-up environment whose endpoints are never reached (nothing listens on port 9).
fn unreachable_env(feature_gates: &str) -> [(&'static str, String); 6] {
    [
        ("KERF_CLUSTER_NAME", "demo".to_string()),
        ("AWS_REGION", "us-west-2".to_string()),
        (
            "KERF_TERMINATION_QUEUE_URL",
            "http://127.0.0.1:9/q".to_string(),
        ),
        (
            "KERF_DISRUPTION_QUEUE_URL",
            "http://127.0.0.1:9/t".to_string(),
        ),
        ("KERF_KUBE_ENDPOINT", "http://127.0.0.1:9".to_string()),
        ("KERF_FEATURE_GATES", feature_gates.to_string()),
    ]
}

#[test]
fn a_payload_neither_a_batch_nor_a_schedule_fails_the_invocation_saying_why() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let api = rt.block_on(RuntimeApi::start());
    let log = std::env::temp_dir().join(format!(
        "kerf-disruption-payload-{}.log",
        std::process::id()
    ));
    let _f = Function::start(
        Path::new(env!("CARGO_BIN_EXE_kerf-disruption")),
        &api,
        &unreachable_env(""),
        Some(&log),
    );
    let message = |payload: Value| {
        let out = rt.block_on(api.invoke(payload, LIMIT));
        let logs = std::fs::read_to_string(&log).unwrap_or_default();
        let err = out.expect_err(&format!("an invocation error; logs:\n{logs}"));
        err["errorMessage"].as_str().unwrap_or_default().to_string()
    };
    let no_type = message(json!({"source": "kerf.schedule"}));
    assert!(
        no_type.contains(
            "neither an SQS batch (no `Records`) nor a scheduled EventBridge event: \
             missing field `detail-type`"
        ),
        "{no_type}"
    );
    let list = message(json!([]));
    assert!(
        list.contains(
            "the payload is an array: neither an SQS batch nor a scheduled EventBridge event"
        ),
        "{list}"
    );
}

#[test]
fn an_unknown_feature_gate_stops_the_start_naming_the_variable() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let api = rt.block_on(RuntimeApi::start());
    let env = unreachable_env("SpotToSpot=true");
    let log =
        std::env::temp_dir().join(format!("kerf-disruption-start-{}.log", std::process::id()));
    let mut f = Function::start(
        Path::new(env!("CARGO_BIN_EXE_kerf-disruption")),
        &api,
        &env,
        Some(&log),
    );
    let status = f.wait_exit(LIMIT).expect("the function exits");
    assert!(!status.success());
    let out = std::fs::read_to_string(&log).unwrap();
    assert!(
        out.contains("KERF_FEATURE_GATES: unknown gate \"SpotToSpot\""),
        "{out}"
    );
}
