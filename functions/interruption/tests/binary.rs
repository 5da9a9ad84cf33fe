//! The real interruption binary against moto through kerf-aws: started as a process on a local
//! Lambda Runtime API and fed one SQS batch holding every kind of event in `events/` (as
//! EventBridge delivers them into SQS, their instance ids pointed at Kerf's NodeClaims), the
//! spot warning twice and an unreadable body. In that one invocation the spot node's offering
//! is recorded unavailable, a replacement for its pod is launched through CreateFleet on
//! another offering, and the spot, stopping, scheduled-change (two instances) and
//! capacity-reservation NodeClaims are handed to the termination queue; the rebalance
//! recommendation is an Event only. Nothing comes back as failed.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers outside #[test] fns

use std::path::Path;
use std::time::Duration;

use k8s_openapi::api::core::v1::{ConfigMap, Event, Node, Pod};
use kerf_api::v1::NodeClaim;
use kerf_e2e::account;
use kerf_e2e::lambda::{Function, RuntimeApi};
use kerf_e2e::world::{getting_started, read};
use kube::api::{Api, ListParams, Patch, PatchParams, PostParams};
use serde_json::{Value, json};

const LIMIT: Duration = Duration::from_secs(60);

/// The events, each with the instance ids its fixture names and the NodeClaims they become.
const KINDS: &[(&str, &[(&str, &str)])] = &[
    ("spot-interruption.json", &[("i-0123456789abcdef0", "spot")]),
    (
        "rebalance-recommendation.json",
        &[("i-0b662ef9931388ba0", "rebalanced")],
    ),
    ("instance-state-change.json", &[("i-abcd1111", "stopping")]),
    (
        "scheduled-change.json",
        &[("i-12345678", "retired-a"), ("i-87654321", "retired-b")],
    ),
    (
        "capacity-reservation-interruption.json",
        &[("i-0abc", "reserved")],
    ),
];

fn instance(claim: &str) -> String {
    format!("i-0{}", hex(claim))
}

/// A stable 16-hex-digit suffix for a NodeClaim's instance id.
fn hex(s: &str) -> String {
    let h = s.bytes().fold(0xcbf29ce484222325u64, |h, b| {
        (h ^ b as u64).wrapping_mul(0x100000001b3)
    });
    format!("{h:016x}")
}

/// A fixture's body with its instance ids replaced by the NodeClaims' instances.
fn body(name: &str, ids: &[(&str, &str)]) -> String {
    let mut body = read(&format!("events/{name}"));
    for (from, claim) in ids {
        body = body.replace(from, &instance(claim));
    }
    body
}

fn record(id: &str, body: String) -> Value {
    let sent = jiff::Timestamp::now().as_millisecond().to_string();
    json!({"messageId": id, "receiptHandle": format!("rh-{id}"), "body": body,
           "attributes": {"ApproximateReceiveCount": "1", "SentTimestamp": sent},
           "messageAttributes": {}, "eventSource": "aws:sqs",
           "eventSourceARN": "arn:aws:sqs:us-west-2:123456789012:my-cluster-kerf-interruption",
           "awsRegion": "us-west-2"})
}

/// An initialized NodeClaim of the default pool on `capacity` m5.large in us-west-2a, and
/// its Ready Node.
async fn claim(client: &kube::Client, name: &str, capacity: &str) {
    let labels = json!({"karpenter.sh/nodepool": "default", "karpenter.sh/capacity-type": capacity,
        "node.kubernetes.io/instance-type": "m5.large", "topology.kubernetes.io/zone": "us-west-2a",
        "karpenter.k8s.aws/instance-category": "m", "karpenter.k8s.aws/instance-generation": "5",
        "kubernetes.io/arch": "amd64", "kubernetes.io/os": "linux"});
    let claims: Api<NodeClaim> = Api::all(client.clone());
    let c: NodeClaim = serde_json::from_value(json!({"apiVersion": "karpenter.sh/v1",
        "kind": "NodeClaim", "metadata": {"name": name, "labels": labels,
            "finalizers": ["karpenter.sh/termination"]},
        "spec": {"requirements": [{"key": "karpenter.sh/nodepool", "operator": "In", "values": ["default"]}],
            "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"}}}))
    .unwrap();
    claims.create(&PostParams::default(), &c).await.unwrap();
    let t = "2026-11-24T02:00:00Z";
    let conds: Vec<Value> = ["Launched", "Registered", "Initialized"]
        .iter()
        .map(|c| json!({"type": c, "status": "True", "reason": c, "message": "", "lastTransitionTime": t}))
        .collect();
    let provider = format!("aws:///us-west-2a/{}", instance(name));
    let status = json!({"status": {"providerID": provider, "nodeName": format!("ip-{name}"),
        "conditions": conds}});
    claims
        .patch_status(name, &PatchParams::default(), &Patch::Merge(&status))
        .await
        .unwrap();
    let mut node_labels = labels.clone();
    node_labels["karpenter.sh/registered"] = json!("true");
    node_labels["karpenter.sh/initialized"] = json!("true");
    node_labels["kubernetes.io/hostname"] = json!(format!("ip-{name}"));
    let nodes: Api<Node> = Api::all(client.clone());
    let node: Node = serde_json::from_value(json!({"apiVersion": "v1", "kind": "Node",
        "metadata": {"name": format!("ip-{name}"), "labels": node_labels,
            "finalizers": ["karpenter.sh/termination"]},
        "spec": {"providerID": provider},
        "status": {"conditions": [{"type": "Ready", "status": "True"}],
            "capacity": {"cpu": "2", "memory": "8Gi", "pods": "29"},
            "allocatable": {"cpu": "1930m", "memory": "7134Mi", "pods": "29"}}}))
    .unwrap();
    nodes.create(&PostParams::default(), &node).await.unwrap();
}

/// A running pod of a ReplicaSet on `node`, asking for 1.5 vCPU: more than any node but its own
/// has left, so the pod of a node that goes needs a new one.
async fn pod_on(client: &kube::Client, name: &str, node: &str) {
    let pods: Api<Pod> = Api::namespaced(client.clone(), "default");
    let p: Pod = serde_json::from_value(json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": "default", "labels": {"app": "inflate"},
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "inflate-5d4f",
                "uid": "6b1f6c1e-2d3a-4c5b-8e9f-0a1b2c3d4e5f", "controller": true}]},
        "spec": {"nodeName": node, "containers": [{"name": "inflate", "image": "public.ecr.aws/eks-distro/kubernetes/pause:3.7",
            "resources": {"requests": {"cpu": "1500m", "memory": "1Gi"}}}]},
        "status": {"phase": "Running"}}))
    .unwrap();
    pods.create(&PostParams::default(), &p).await.unwrap();
}

fn label(c: &NodeClaim, k: &str) -> String {
    let l = c.metadata.labels.clone().unwrap_or_default();
    l.get(k).cloned().unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_batch_of_every_kind_through_the_binary_on_moto() {
    let (_guard, moto) = kerf_e2e::moto::fresh().await;
    let acct = account::seed(&moto.url).await;
    let w = getting_started().await.unwrap();
    let pool = read("examples/getting-started/nodepool.yaml").replace(
        "values: [\"on-demand\"]",
        "values: [\"spot\", \"on-demand\"]",
    );
    w.apply(&pool).await.unwrap();
    let names = [
        "spot",
        "rebalanced",
        "stopping",
        "retired-a",
        "retired-b",
        "reserved",
    ];
    for n in names {
        let capacity = match n {
            "spot" | "rebalanced" => "spot",
            "reserved" => "reserved",
            _ => "on-demand",
        };
        claim(&w.client, n, capacity).await;
    }
    for n in names {
        pod_on(&w.client, &format!("inflate-{n}"), &format!("ip-{n}")).await;
    }

    let mut records: Vec<Value> = KINDS
        .iter()
        .enumerate()
        .map(|(i, (name, ids))| record(&format!("m-{i}"), body(name, ids)))
        .collect();
    records.push(record("m-again", body(KINDS[0].0, KINDS[0].1)));
    records.push(record("m-garbled", "{\"not\": \"an event\"".into()));

    let api = RuntimeApi::start().await;
    let log = std::env::temp_dir().join(format!("kerf-interruption-{}.log", std::process::id()));
    let _f = Function::start(
        Path::new(env!("CARGO_BIN_EXE_kerf-interruption")),
        &api,
        &acct.env(w.sim().unwrap().url()),
        Some(&log),
    );
    let out = api.invoke(json!({"Records": records}), LIMIT).await;
    let logs = std::fs::read_to_string(&log).unwrap_or_default();
    assert_eq!(out, Ok(json!({"batchItemFailures": []})), "logs:\n{logs}");

    let claims: Api<NodeClaim> = Api::all(w.client.clone());
    let all = claims.list(&ListParams::default()).await.unwrap().items;
    let deleting = |n: &str| {
        all.iter()
            .find(|c| c.metadata.name.as_deref() == Some(n))
            .is_some_and(|c| c.metadata.deletion_timestamp.is_some())
    };
    for n in ["spot", "stopping", "retired-a", "retired-b", "reserved"] {
        assert!(deleting(n), "{n} is handed to termination; logs:\n{logs}");
    }
    assert!(
        !deleting("rebalanced"),
        "a rebalance recommendation only warns"
    );
    assert_eq!(
        acct.queued_on(&acct.termination_queue_url).await,
        5,
        "one termination message per interrupted NodeClaim, the duplicate warning none"
    );

    // The replacement for the spot node's pod, launched on EC2 in the same invocation, not on
    // the reclaimed offering.
    let fresh: Vec<&NodeClaim> = all
        .iter()
        .filter(|c| !names.contains(&c.metadata.name.as_deref().unwrap_or_default()))
        .collect();
    // The five pods of the five nodes that go: 1.5 vCPU each, onto new capacity.
    assert!(!fresh.is_empty(), "replacements; logs:\n{logs}");
    for r in &fresh {
        let provider = r.status.as_ref().and_then(|s| s.provider_id.clone());
        assert!(
            provider.is_some_and(|p| p.starts_with("aws:///")),
            "the replacement is launched: {r:?}\nlogs:\n{logs}"
        );
        let offering = (
            label(r, "karpenter.sh/capacity-type"),
            label(r, "node.kubernetes.io/instance-type"),
            label(r, "topology.kubernetes.io/zone"),
        );
        assert_ne!(
            offering,
            ("spot".into(), "m5.large".into(), "us-west-2a".into()),
            "never the reclaimed offering"
        );
    }
    let cms: Api<ConfigMap> = Api::namespaced(w.client.clone(), "kerf");
    let cm = cms.get("kerf-unavailable-offerings").await.unwrap();
    let data = serde_json::to_string(&cm.data).unwrap();
    assert!(
        data.contains("m5.large") && data.contains("us-west-2a") && data.contains("spot"),
        "{data}"
    );

    let events: Api<Event> = Api::all(w.client.clone());
    let reasons: Vec<String> = events
        .list(&ListParams::default())
        .await
        .unwrap()
        .items
        .into_iter()
        .filter_map(|e| e.reason)
        .collect();
    assert!(
        reasons.iter().any(|r| r == "SpotRebalanceRecommendation"),
        "{reasons:?}"
    );
    assert!(
        logs.contains("initiating delete from interruption message"),
        "{logs}"
    );
    assert!(
        logs.contains("failed parsing interruption message"),
        "{logs}"
    );
    assert!(
        logs.contains("karpenter_interruption_received_messages_total"),
        "EMF: {logs}"
    );
}
