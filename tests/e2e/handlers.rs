//! The sample events in `events/` through the handlers the functions run, against the
//! simulated cluster: each fixture is a realistic payload of one trigger.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers outside #[test] fns

use base64::Engine;
use kerf_control::handlers::webhook;
use kerf_e2e::events;
use kerf_e2e::world::*;
use kerf_sim::world::World;
use kube::api::{Api, Patch, PatchParams, PostParams};
use serde_json::{Value, json};

const SECRET: &str = "kerf-example-secret";

fn fixture(name: &str) -> Value {
    serde_json::from_str(&read(&format!("events/{name}"))).unwrap()
}

/// The AdmissionReview a Function URL event carries.
fn body_of(event: &Value) -> String {
    String::from_utf8(webhook::body(&events::url(event)).unwrap()).unwrap()
}

fn answer(r: &webhook::HttpResponse) -> &Value {
    &r.body["response"]
}

#[tokio::test]
async fn webhook_fixtures() {
    let w = getting_started().await.unwrap();
    let ctx = &w.webhook;

    let valid = events::webhook(
        ctx,
        &w.queue,
        &w.timer_queue,
        SECRET,
        &fixture("webhook-nodepool-valid.json"),
    )
    .await;
    assert_eq!(
        (valid.status, answer(&valid)["allowed"].clone()),
        (200, json!(true))
    );
    assert_eq!(
        answer(&valid)["uid"],
        "9f8e7d6c-5b4a-4392-8170-6f5e4d3c2b1a"
    );

    let invalid = events::webhook(
        ctx,
        &w.queue,
        &w.timer_queue,
        SECRET,
        &fixture("webhook-nodepool-invalid.json"),
    )
    .await;
    assert_eq!(answer(&invalid)["allowed"], false);
    let msg = answer(&invalid)["status"]["message"]
        .as_str()
        .unwrap()
        .to_string();
    for part in [
        "spec.template.spec.requirements[2].values: no valid capacity type",
        "spec.template.spec.startupTaints[0]: duplicate taint",
        "spec.disruption.budgets[0].schedule: invalid cron",
    ] {
        assert!(msg.contains(part), "{part} not in {msg}");
    }

    let before = w.queue.len();
    let pod = events::webhook(
        ctx,
        &w.queue,
        &w.timer_queue,
        SECRET,
        &fixture("webhook-pod-unschedulable.json"),
    )
    .await;
    assert_eq!(answer(&pod)["allowed"], true);
    assert_eq!(w.queue.len(), before + 1, "a provisioning hint was queued");

    let mut wrong = fixture("webhook-pod-unschedulable.json");
    wrong["rawPath"] = json!("/guess/admit");
    let denied = events::webhook(ctx, &w.queue, &w.timer_queue, SECRET, &wrong).await;
    assert_eq!(denied.status, 401);
    assert_eq!(
        w.queue.len(),
        before + 1,
        "no side effect without the secret"
    );
    let mut big = fixture("webhook-pod-unschedulable.json");
    big["body"] = json!("x".repeat(webhook::MAX_BODY + 1));
    assert_eq!(
        events::webhook(ctx, &w.queue, &w.timer_queue, SECRET, &big)
            .await
            .status,
        413
    );
    // A review that can be answered but whose object is garbage: Kerf's CRDs are denied
    // with the reason, pods and nodes are let through (a Kerf bug never blocks a workload).
    for (name, allowed) in [
        ("webhook-nodepool-valid.json", false),
        ("webhook-pod-unschedulable.json", true),
        ("webhook-node-create.json", true),
    ] {
        let mut garbled = fixture(name);
        let mut review: Value = serde_json::from_str(&body_of(&garbled)).unwrap();
        review["request"]["object"] = json!("not an object");
        garbled["body"] = json!(review.to_string());
        garbled["isBase64Encoded"] = json!(false);
        let r = events::webhook(ctx, &w.queue, &w.timer_queue, SECRET, &garbled).await;
        assert_eq!(r.status, 200, "{name}");
        assert_eq!(answer(&r)["allowed"], allowed, "{name}");
        if !allowed {
            let msg = answer(&r)["status"]["message"]
                .as_str()
                .unwrap_or_default()
                .to_string();
            assert!(msg.contains("is invalid"), "{name}: {msg}");
        }
    }
    let mut junk = fixture("webhook-pod-unschedulable.json");
    junk["body"] = json!("{\"kind\": \"AdmissionReview\"}");
    assert_eq!(
        events::webhook(ctx, &w.queue, &w.timer_queue, SECRET, &junk)
            .await
            .status,
        400
    );
}

#[tokio::test]
async fn pod_delete_fixture_is_a_pod_event_for_the_disruption_function() {
    let w = getting_started().await.unwrap();
    let (hints, timers) = (w.queue.len(), w.timer_queue.len());
    let r = events::webhook(
        &w.webhook,
        &w.queue,
        &w.timer_queue,
        SECRET,
        &fixture("webhook-pod-delete.json"),
    )
    .await;
    assert_eq!(answer(&r)["allowed"], true);
    assert_eq!(w.queue.len(), hints, "no provisioning request");
    let sent = w.timer_queue.receive(100);
    assert_eq!(sent.len(), timers + 1, "one timer message");
    let t = kerf_control::ports::Timer::parse(&sent[timers].body).unwrap();
    assert_eq!(t.kind, kerf_control::ports::TimerKind::PodEvent);
    assert_eq!(t.objects, ["ip-192-168-51-117.us-west-2.compute.internal"]);
}

#[tokio::test]
async fn pod_running_fixture_times_startup_and_queues_nothing() {
    let w = getting_started().await.unwrap();
    let ctx = &w.webhook;
    let before = w.queue.len();
    let r = events::webhook(
        ctx,
        &w.queue,
        &w.timer_queue,
        SECRET,
        &fixture("webhook-pod-running.json"),
    )
    .await;
    assert_eq!(answer(&r)["allowed"], true);
    assert_eq!(
        w.queue.len(),
        before,
        "a running pod is no provisioning request"
    );
    let docs = w.logs.entries();
    let startup: Vec<&Value> = docs
        .iter()
        .filter_map(|d| d.get("karpenter_pods_startup_duration_seconds"))
        .collect();
    assert_eq!(startup.len(), 1, "one startup observation in {docs:?}");
    assert!(
        docs.iter()
            .any(|d| d["_aws"]["CloudWatchMetrics"].is_array())
    );
}

/// The fixture's Node name and providerID.
const FIXTURE_NODE: &str = "ip-192-168-42-7.us-west-2.compute.internal";
const FIXTURE_PID: &str = "aws:///us-west-2a/i-0a1b2c3d4e5f60718";

/// The fixture's Node CREATE review, for Node `name` of the instance `pid`.
fn node_create(name: &str, pid: &str) -> Value {
    let mut e = fixture("webhook-node-create.json");
    let body = e["body"]
        .as_str()
        .unwrap()
        .replace(FIXTURE_NODE, name)
        .replace(FIXTURE_PID, pid);
    e["body"] = json!(body);
    e
}

/// The fixture's NodeClaim `default-x7k2p`, launched as `pid`.
async fn launched_claim(w: &World, pid: &str) {
    let claims: Api<kerf_api::v1::NodeClaim> = Api::all(w.client.clone());
    let claim: kerf_api::v1::NodeClaim = serde_json::from_value(json!({"apiVersion": "karpenter.sh/v1", "kind": "NodeClaim",
        "metadata": {"name": "default-x7k2p", "labels": {"karpenter.sh/nodepool": "default", "team": "web"}},
        "spec": {"requirements": [{"key": "karpenter.sh/nodepool", "operator": "In", "values": ["default"]}],
            "startupTaints": [{"key": "node.cilium.io/agent-not-ready", "effect": "NoExecute"}],
            "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"}}}))
    .unwrap();
    claims.create(&PostParams::default(), &claim).await.unwrap();
    let status = json!({"status": {"providerID": pid}});
    claims
        .patch_status(
            "default-x7k2p",
            &PatchParams::default(),
            &Patch::Merge(&status),
        )
        .await
        .unwrap();
}

/// An instance started for `claim` in us-west-2a: its providerID and private DNS name.
fn instance_for(w: &World, claim: &str) -> (String, String) {
    let tags = std::collections::BTreeMap::from([(
        "karpenter.sh/nodeclaim".to_string(),
        claim.to_string(),
    )]);
    let id = w.cloud.start_stray("c6a.2xlarge", "us-west-2a", tags);
    let i = w
        .cloud
        .instances()
        .into_iter()
        .find(|i| i.info.id == id)
        .unwrap();
    (i.info.provider_id, i.info.private_dns_name.unwrap())
}

#[tokio::test]
async fn node_create_fixture_registers_with_its_nodeclaim() {
    let w = getting_started().await.unwrap();
    let (pid, name) = instance_for(&w, "default-x7k2p");
    launched_claim(&w, &pid).await;

    let sent = w.queue.sent();
    let event = node_create(&name, &pid);
    let r = events::webhook(&w.webhook, &w.queue, &w.timer_queue, SECRET, &event).await;
    let resp = answer(&r);
    assert_eq!(
        (resp["allowed"].clone(), resp["patchType"].clone()),
        (json!(true), json!("JSONPatch"))
    );
    let patch: Value = serde_json::from_slice(
        &base64::engine::general_purpose::STANDARD
            .decode(resp["patch"].as_str().unwrap())
            .unwrap(),
    )
    .unwrap();
    let mut node = serde_json::from_str::<Value>(event["body"].as_str().unwrap()).unwrap()
        ["request"]["object"]
        .clone();
    json_patch::patch(
        &mut node,
        &serde_json::from_value::<json_patch::Patch>(patch).unwrap(),
    )
    .unwrap();
    assert_eq!(
        node["metadata"]["labels"]["karpenter.sh/registered"],
        "true"
    );
    assert_eq!(node["metadata"]["labels"]["team"], "web");
    assert_eq!(
        node["metadata"]["finalizers"],
        json!(["karpenter.sh/termination"])
    );
    assert_eq!(
        node["metadata"]["ownerReferences"][0]["name"],
        "default-x7k2p"
    );
    assert_eq!(
        node["spec"]["taints"],
        Value::Null,
        "unregistered gone; taints not synced (do-not-sync-taints)"
    );
    let claims: Api<kerf_api::v1::NodeClaim> = Api::all(w.client.clone());
    let c = claims.get("default-x7k2p").await.unwrap();
    assert!(
        !condition(&c, "Registered"),
        "a review's body writes nothing: the provisioner registers the stored Node"
    );
    assert_eq!(c.status.unwrap().node_name, None);
    assert_eq!(
        w.queue.sent(),
        sent + 1,
        "the review wakes the provisioner (a delayed hint)"
    );
}

/// A forged review (anyone holding the URL can send one) learns nothing of a NodeClaim:
/// unless EC2 confirms that the providerID's instance was launched for the claim and
/// registers under the Node's name, the Node is admitted unpatched. It still wakes the
/// provisioner, which reads the API server, not the review.
#[tokio::test]
async fn a_node_review_ec2_does_not_confirm_is_admitted_unpatched() {
    let w = getting_started().await.unwrap();
    let (pid, name) = instance_for(&w, "default-x7k2p");
    let (other_pid, other_name) = instance_for(&w, "default-other");
    let cases = [
        ("an instance EC2 does not know", FIXTURE_NODE, FIXTURE_PID),
        (
            "another Node name",
            "ip-10-9-9-9.us-west-2.compute.internal",
            pid.as_str(),
        ),
        (
            "an instance launched for another claim",
            other_name.as_str(),
            other_pid.as_str(),
        ),
    ];
    for (what, node, claim_pid) in cases {
        let claims: Api<kerf_api::v1::NodeClaim> = Api::all(w.client.clone());
        let _ = claims.delete("default-x7k2p", &Default::default()).await;
        launched_claim(&w, claim_pid).await;
        let sent = w.queue.sent();
        let r = events::webhook(
            &w.webhook,
            &w.queue,
            &w.timer_queue,
            SECRET,
            &node_create(node, claim_pid),
        )
        .await;
        let resp = answer(&r);
        assert_eq!(resp["allowed"], json!(true), "{what}");
        assert_eq!(resp.get("patch"), None, "{what}: {resp}");
        assert_eq!(
            w.queue.sent(),
            sent + 1,
            "{what}: the provisioner is still woken"
        );
    }
    // The same review with the launched instance's own name is confirmed.
    let claims: Api<kerf_api::v1::NodeClaim> = Api::all(w.client.clone());
    claims
        .delete("default-x7k2p", &Default::default())
        .await
        .unwrap();
    launched_claim(&w, &pid).await;
    let r = events::webhook(
        &w.webhook,
        &w.queue,
        &w.timer_queue,
        SECRET,
        &node_create(&name, &pid),
    )
    .await;
    assert!(answer(&r)["patch"].is_string());
}

#[tokio::test]
async fn provisioner_fixtures() {
    let mut w = getting_started().await.unwrap();
    w.apply(&inflate(3)).await.unwrap();
    w.tick().await.unwrap();
    let batch = events::provisioner(
        &w.provisioner,
        &w.queue,
        "req-1",
        &fixture("sqs-provisioning-batch.json"),
    )
    .await;
    assert_eq!(batch, json!({"batchItemFailures": []}));
    assert_eq!(
        claims(&w.client).await.len(),
        1,
        "the hint's bodies only wake the provisioner"
    );
    let sweep = events::provisioner(
        &w.provisioner,
        &w.queue,
        "req-2",
        &fixture("scheduled-event.json"),
    )
    .await;
    assert_eq!(sweep["status"], "ok");
    assert_eq!(sweep["launched"], json!([]), "nothing more to launch");
}

#[tokio::test]
async fn a_kerf_failure_never_blocks_a_node_and_a_failed_publish_never_fails_a_launch() {
    let mut w = getting_started().await.unwrap();
    w.sim().unwrap().inject(kerf_sim::Fault {
        method: "GET".into(),
        path_contains: "/nodeclaims".into(),
        // Every attempt of the list (a failed page is tried three times).
        times: 3,
        error: kerf_sim::ApiError::internal("etcd is sad"),
    });
    let r = events::webhook(
        &w.webhook,
        &w.queue,
        &w.timer_queue,
        SECRET,
        &fixture("webhook-node-create.json"),
    )
    .await;
    assert_eq!(
        (r.status, answer(&r)["allowed"].clone()),
        (200, json!(true))
    );
    assert!(answer(&r)["patch"].is_null(), "no patch without the claims");
    assert!(
        !w.logs
            .with_message("could not list nodeclaims to register a node")
            .is_empty()
    );

    w.publisher.fail(100);
    w.apply(&inflate(2)).await.unwrap();
    assert!(
        w.run_until(jiff::SignedDuration::from_mins(3), |c| all_running(c, 2))
            .await
            .unwrap()
    );
    assert!(w.publisher.events().is_empty());
    assert!(
        !w.logs
            .with_message("could not publish decision events")
            .is_empty()
    );
    assert_eq!(claims(&w.client).await.len(), 1);
}

#[tokio::test]
async fn a_batch_the_api_server_fails_comes_back_whole_and_is_handled_on_redelivery() {
    let mut w = getting_started().await.unwrap();
    w.apply(&inflate(5)).await.unwrap();
    w.tick().await.unwrap();
    batch_ends(&w);
    let messages = w.queue.receive(100);
    assert!(!messages.is_empty(), "the webhook queued hints");
    let event = events::batch(&messages);
    let switch = kerf_sim::world::crash::CrashSwitch::after(0);
    let down = w.crashing(&switch);
    let r = events::provisioner(&down, &w.queue, "a", &event).await;
    let mut failed: Vec<String> = r["batchItemFailures"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["itemIdentifier"].as_str().unwrap().to_string())
        .collect();
    let mut ids: Vec<String> = messages.iter().map(|m| m.id.clone()).collect();
    failed.sort();
    ids.sort();
    assert_eq!(failed, ids, "every hint of the batch is redelivered");
    assert!(claims(&w.client).await.is_empty(), "nothing acted");
    let again = events::provisioner(&w.provisioner, &w.queue, "b", &event).await;
    assert_eq!(again["batchItemFailures"], json!([]));
    assert!(
        !claims(&w.client).await.is_empty(),
        "the redelivery provisions"
    );
}
