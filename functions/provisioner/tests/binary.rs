//! The real provisioner binary against moto through kerf-aws, end to end: started as a
//! process on a local Lambda Runtime API, fed the SQS batch and the scheduled event from
//! `events/`, it plans the getting-started cluster (in the in-process API server), creates
//! the NodeClaim, resolves the EC2NodeClass (subnets, security group, AMI from SSM), creates
//! a launch template and launches through CreateFleet, and records the instance.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers outside #[test] fns

use std::path::Path;
use std::time::Duration;

use base64::Engine;
use kerf_e2e::account::{self, CLUSTER};
use kerf_e2e::lambda::{Function, RuntimeApi};
use kerf_e2e::world::{claims, getting_started, inflate, read};
use serde_json::{Value, json};

const LIMIT: Duration = Duration::from_secs(60);

fn fixture(name: &str) -> Value {
    serde_json::from_str(&read(&format!("events/{name}"))).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_binary_provisions_through_ec2_on_moto() {
    let (_guard, moto) = kerf_e2e::moto::fresh().await;
    let acct = account::seed(&moto.url).await;
    let w = getting_started().await.unwrap();
    w.apply(&inflate(5)).await.unwrap();
    kerf_sim::world::workloads::step(&w.client, &w.sim().unwrap().cached())
        .await
        .unwrap();
    let marked = w.scheduler().unwrap().step().await.unwrap();
    assert_eq!(marked.marked_unschedulable, 5);

    let api = RuntimeApi::start().await;
    let log = std::env::temp_dir().join(format!("kerf-provisioner-{}.log", std::process::id()));
    let batch = api.push(fixture("sqs-provisioning-batch.json"));
    let _f = Function::start(
        Path::new(env!("CARGO_BIN_EXE_kerf-provisioner")),
        &api,
        &acct.env(w.sim().unwrap().url()),
        Some(&log),
    );
    let out = api.wait(&batch, LIMIT).await;
    let logs = std::fs::read_to_string(&log).unwrap_or_default();
    assert_eq!(out, Ok(json!({"batchItemFailures": []})), "logs:\n{logs}");

    let cs = claims(&w.client).await;
    assert_eq!(cs.len(), 1, "logs:\n{logs}");
    let claim = kerf_control::claim::name(&cs[0]).to_string();
    let pid = kerf_control::claim::provider_id(&cs[0])
        .expect("launched")
        .to_string();
    let instance_id = pid.rsplit('/').next().unwrap().to_string();
    let found = acct
        .clients
        .ec2
        .describe_instances()
        .instance_ids(&instance_id)
        .send()
        .await
        .unwrap();
    let inst = found.reservations()[0].instances()[0].clone();
    let tags: std::collections::BTreeMap<String, String> = inst
        .tags()
        .iter()
        .map(|t| {
            (
                t.key().unwrap_or_default().to_string(),
                t.value().unwrap_or_default().to_string(),
            )
        })
        .collect();
    assert_eq!(tags["karpenter.sh/nodeclaim"], claim);
    assert_eq!(tags["karpenter.sh/nodepool"], "default");
    assert_eq!(tags["karpenter.k8s.aws/ec2nodeclass"], "default");
    assert_eq!(tags[&format!("kubernetes.io/cluster/{CLUSTER}")], "owned");
    let itype = inst.instance_type().unwrap().as_str().to_string();
    assert!(
        ["c6a.2xlarge", "c5.2xlarge", "m5.2xlarge", "m6a.2xlarge"].contains(&itype.as_str()),
        "{itype}"
    );

    let lts = acct
        .clients
        .ec2
        .describe_launch_templates()
        .send()
        .await
        .unwrap();
    let lt = lts
        .launch_templates()
        .iter()
        .find(|t| {
            t.launch_template_name()
                .is_some_and(|n| n.starts_with("kerf.k8s.aws/"))
        })
        .expect("a launch template");
    let version = acct
        .clients
        .ec2
        .describe_launch_template_versions()
        .launch_template_id(lt.launch_template_id().unwrap())
        .send()
        .await
        .unwrap();
    let data = version.launch_template_versions()[0]
        .launch_template_data()
        .unwrap();
    assert_eq!(data.image_id(), Some(account::EKS_AMI));
    let user_data = String::from_utf8(
        base64::engine::general_purpose::STANDARD
            .decode(data.user_data().unwrap())
            .unwrap(),
    )
    .unwrap();
    assert!(
        user_data.contains("apiServerEndpoint") && user_data.contains("maxPods"),
        "{user_data}"
    );
    assert!(logs.contains("launched nodeclaim"), "{logs}");

    let sweep = api
        .invoke(fixture("scheduled-event.json"), LIMIT)
        .await
        .unwrap();
    assert_eq!(sweep["status"], "ok", "{sweep}");
    let again = api
        .invoke(fixture("sqs-provisioning-batch.json"), LIMIT)
        .await
        .unwrap();
    assert_eq!(again, json!({"batchItemFailures": []}));
    assert_eq!(
        claims(&w.client).await.len(),
        1,
        "the in-flight claim counts: nothing new"
    );
    let all = acct.clients.ec2.describe_instances().send().await.unwrap();
    let n: usize = all.reservations().iter().map(|r| r.instances().len()).sum();
    assert_eq!(n, 1, "one instance in the account");
}
