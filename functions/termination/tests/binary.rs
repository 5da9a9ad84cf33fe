//! The real termination binary against moto through kerf-aws: started as a process on a local
//! Lambda Runtime API and fed the SQS batch from `events/`, it takes a deleted NodeClaim (with
//! its Node and its EC2 instance) down: the Node tainted, the instance terminated in EC2, the
//! Node deleted and the finalizers removed. The duplicate message in the batch is one pass, the
//! unreadable one is logged and dropped, and a pass that must wait re-queues itself on the
//! termination queue. Without a Kubernetes client, every message of the batch comes back.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers outside #[test] fns

use std::path::Path;
use std::time::Duration;

use aws_sdk_ec2::types::{InstanceStateName, InstanceType, ResourceType, Tag, TagSpecification};
use k8s_openapi::api::core::v1::Node;
use kerf_api::v1::NodeClaim;
use kerf_e2e::account::{self, Account, CLUSTER};
use kerf_e2e::lambda::{Function, RuntimeApi};
use kerf_e2e::world::{getting_started, read};
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use serde_json::{Value, json};

const LIMIT: Duration = Duration::from_secs(60);
const CLAIM: &str = "default-x7k2p";
const NODE: &str = "ip-192-168-51-117.us-west-2.compute.internal";

fn fixture(name: &str) -> Value {
    serde_json::from_str(&read(&format!("events/{name}"))).unwrap()
}

async fn launch(acct: &Account) -> String {
    let tags = [
        (format!("kubernetes.io/cluster/{CLUSTER}"), "owned"),
        ("karpenter.sh/nodepool".into(), "default"),
        ("karpenter.sh/nodeclaim".into(), CLAIM),
    ];
    let mut spec = TagSpecification::builder().resource_type(ResourceType::Instance);
    for (k, v) in tags {
        spec = spec.tags(Tag::builder().key(k).value(v).build());
    }
    let out = acct
        .clients
        .ec2
        .run_instances()
        .image_id(account::EKS_AMI)
        .instance_type(InstanceType::M5Large)
        .min_count(1)
        .max_count(1)
        .tag_specifications(spec.build())
        .send()
        .await
        .unwrap();
    out.instances()[0].instance_id().unwrap().to_string()
}

async fn state(acct: &Account, id: &str) -> InstanceStateName {
    let out = acct
        .clients
        .ec2
        .describe_instances()
        .instance_ids(id)
        .send()
        .await
        .unwrap();
    let i = &out.reservations()[0].instances()[0];
    i.state().unwrap().name().unwrap().clone()
}

/// A registered NodeClaim and its Ready Node, as the provisioner and the webhook leave them.
async fn registered(client: &kube::Client, provider_id: &str) {
    let claims: Api<NodeClaim> = Api::all(client.clone());
    let claim: NodeClaim = serde_json::from_value(json!({"apiVersion": "karpenter.sh/v1",
        "kind": "NodeClaim", "metadata": {"name": CLAIM, "labels": {"karpenter.sh/nodepool": "default"},
            "finalizers": ["karpenter.sh/termination"]},
        "spec": {"requirements": [{"key": "karpenter.sh/nodepool", "operator": "In", "values": ["default"]}],
            "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"}}}))
    .unwrap();
    claims.create(&PostParams::default(), &claim).await.unwrap();
    let status = json!({"status": {"providerID": provider_id, "nodeName": NODE}});
    claims
        .patch_status(CLAIM, &PatchParams::default(), &Patch::Merge(&status))
        .await
        .unwrap();
    let nodes: Api<Node> = Api::all(client.clone());
    let node: Node = serde_json::from_value(json!({"apiVersion": "v1", "kind": "Node",
        "metadata": {"name": NODE, "labels": {"karpenter.sh/nodepool": "default",
            "karpenter.sh/registered": "true"}, "finalizers": ["karpenter.sh/termination"]},
        "spec": {"providerID": provider_id},
        "status": {"conditions": [{"type": "Ready", "status": "True"}]}}))
    .unwrap();
    nodes.create(&PostParams::default(), &node).await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_binary_terminates_a_deleted_nodeclaim_through_ec2_on_moto() {
    let (_guard, moto) = kerf_e2e::moto::fresh().await;
    let acct = account::seed(&moto.url).await;
    let w = getting_started().await.unwrap();
    let id = launch(&acct).await;
    registered(&w.client, &format!("aws:///us-west-2a/{id}")).await;
    let claims: Api<NodeClaim> = Api::all(w.client.clone());
    let nodes: Api<Node> = Api::all(w.client.clone());
    claims
        .delete(CLAIM, &DeleteParams::default())
        .await
        .unwrap();

    let api = RuntimeApi::start().await;
    let log = std::env::temp_dir().join(format!("kerf-termination-{}.log", std::process::id()));
    let _f = Function::start(
        Path::new(env!("CARGO_BIN_EXE_kerf-termination")),
        &api,
        &acct.env(w.sim().unwrap().url()),
        Some(&log),
    );
    let mut requeued = 0;
    // The node stays Draining for Karpenter's minimum drain time (5 s) before its instance
    // goes: about 15 s of passes leaves room for it.
    for _ in 0..60 {
        let out = api
            .invoke(fixture("sqs-termination-batch.json"), LIMIT)
            .await;
        let logs = std::fs::read_to_string(&log).unwrap_or_default();
        assert_eq!(out, Ok(json!({"batchItemFailures": []})), "logs:\n{logs}");
        if claims.get_opt(CLAIM).await.unwrap().is_none() {
            break;
        }
        requeued = requeued.max(acct.queued_on(&acct.termination_queue_url).await);
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let logs = std::fs::read_to_string(&log).unwrap_or_default();
    assert!(
        claims.get_opt(CLAIM).await.unwrap().is_none(),
        "logs:\n{logs}"
    );
    assert!(
        nodes.get_opt(NODE).await.unwrap().is_none(),
        "the node is deleted"
    );
    assert!(
        matches!(
            state(&acct, &id).await,
            InstanceStateName::Terminated | InstanceStateName::ShuttingDown
        ),
        "the instance is terminated"
    );
    assert!(
        requeued >= 1,
        "a waiting pass re-queues itself; logs:\n{logs}"
    );
    assert!(
        logs.contains("dropping unreadable termination message"),
        "{logs}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_kubernetes_client_the_whole_batch_comes_back() {
    // EKS discovery at an address where nothing listens: no client can be built.
    let env: Vec<(&str, String)> = vec![
        ("KERF_CLUSTER_NAME", CLUSTER.into()),
        ("AWS_REGION", "us-west-2".into()),
        ("AWS_ACCESS_KEY_ID", "test".into()),
        ("AWS_SECRET_ACCESS_KEY", "test".into()),
        ("AWS_ENDPOINT_URL", "http://127.0.0.1:9".into()),
        ("KERF_TERMINATION_QUEUE_URL", "http://127.0.0.1:9/q".into()),
        ("KERF_DISRUPTION_QUEUE_URL", "http://127.0.0.1:9/t".into()),
    ];
    let api = RuntimeApi::start().await;
    let log = std::env::temp_dir().join(format!(
        "kerf-termination-nokube-{}.log",
        std::process::id()
    ));
    let _f = Function::start(
        Path::new(env!("CARGO_BIN_EXE_kerf-termination")),
        &api,
        &env,
        Some(&log),
    );
    let batch = fixture("sqs-termination-batch.json");
    let every: Vec<Value> = batch["Records"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| json!({"itemIdentifier": r["messageId"]}))
        .collect();
    let out = api.invoke(batch, LIMIT).await;
    let logs = std::fs::read_to_string(&log).unwrap_or_default();
    assert_eq!(
        out,
        Ok(json!({"batchItemFailures": every})),
        "logs:\n{logs}"
    );
    assert!(logs.contains("no kubernetes client"), "{logs}");
}
