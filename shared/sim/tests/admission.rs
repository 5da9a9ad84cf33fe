//! Admission webhooks: mutation by JSONPatch, denial, rules, failure policy, and the clock.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers outside #[test] fns

mod common;

use base64::Engine;
use common::*;
use k8s_openapi::api::core::v1::{Node, Pod};
use kerf_sim::Sim;
use kerf_sim::admission::{Hook, Rule};
use kube::api::{Api, Patch, PatchParams, PostParams};
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};

fn hook(
    name: &str,
    rules: Vec<Rule>,
    fail_open: bool,
    f: impl Fn(&Value) -> Result<Value, String> + Send + Sync + 'static,
) -> Hook {
    let f = Arc::new(f);
    Hook {
        name: name.into(),
        rules,
        fail_open,
        call: Arc::new(move |review| {
            let f = f.clone();
            Box::pin(async move { f(&review) })
        }),
    }
}

fn answer(review: &Value, allowed: bool, patch: Option<Value>) -> Value {
    let mut r = json!({"uid": review["request"]["uid"], "allowed": allowed});
    if !allowed {
        r["status"] = json!({"code": 403, "message": "no thanks"});
    }
    if let Some(p) = patch {
        r["patchType"] = json!("JSONPatch");
        r["patch"] = json!(base64::engine::general_purpose::STANDARD.encode(p.to_string()));
    }
    json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "response": r})
}

#[tokio::test]
async fn hooks_mutate_deny_and_see_status_updates() {
    let seen: Arc<Mutex<Vec<Value>>> = Arc::default();
    let seen2 = seen.clone();
    let label = hook(
        "label",
        vec![Rule::new("", "nodes", &["CREATE"])],
        false,
        |r| {
            let p = json!([{"op": "add", "path": "/metadata/labels/registered", "value": "yes"}]);
            Ok(answer(r, true, Some(p)))
        },
    );
    let watch = hook(
        "pods",
        vec![Rule::new("", "pods/status", &["UPDATE"])],
        true,
        move |r| {
            seen2.lock().unwrap().push(r["request"].clone());
            Ok(answer(
                r,
                r["request"]["object"]["status"]["phase"] != "Failed",
                None,
            ))
        },
    );
    let broken = hook(
        "broken",
        vec![Rule::new("", "pods/status", &["UPDATE"])],
        true,
        |_| Err("down".into()),
    );
    let sim = Sim::builder()
        .admission(label)
        .admission(watch)
        .admission(broken)
        .start()
        .await
        .unwrap();
    let client = sim.client().unwrap();
    let nodes: Api<Node> = Api::all(client.clone());
    let n = nodes
        .create(&PostParams::default(), &node("n1", json!({"a": "b"})))
        .await
        .unwrap();
    let labels = n.metadata.labels.unwrap();
    assert_eq!(
        (labels["a"].as_str(), labels["registered"].as_str()),
        ("b", "yes")
    );

    let pods: Api<Pod> = Api::namespaced(client, "default");
    pods.create(&PostParams::default(), &pod("p", "n1", json!({})))
        .await
        .unwrap();
    let running = json!({"status": {"phase": "Running"}});
    pods.patch_status("p", &PatchParams::default(), &Patch::Merge(&running))
        .await
        .unwrap();
    let reviews = seen.lock().unwrap().clone();
    assert_eq!(reviews.len(), 1, "only the status update, not the create");
    assert_eq!(reviews[0]["subResource"], "status");
    assert_eq!(reviews[0]["operation"], "UPDATE");
    assert_eq!(reviews[0]["object"]["status"]["phase"], "Running");
    assert_eq!(reviews[0]["oldObject"]["status"]["phase"], "Pending");
    let failed = json!({"status": {"phase": "Failed"}});
    let e = status(
        pods.patch_status("p", &PatchParams::default(), &Patch::Merge(&failed))
            .await
            .unwrap_err(),
    );
    assert_eq!(e.code, 403);
    assert!(
        e.message
            .contains("admission webhook \"pods\" denied the request: no thanks"),
        "{}",
        e.message
    );
    assert_eq!(
        pods.get("p")
            .await
            .unwrap()
            .status
            .unwrap()
            .phase
            .as_deref(),
        Some("Running")
    );
}

#[tokio::test]
async fn a_failing_hook_fails_closed_unless_it_fails_open() {
    let strict = hook(
        "strict",
        vec![Rule::new("", "nodes", &["CREATE"])],
        false,
        |_| Err("down".into()),
    );
    let sim = Sim::builder().admission(strict).start().await.unwrap();
    let nodes: Api<Node> = Api::all(sim.client().unwrap());
    let e = status(
        nodes
            .create(&PostParams::default(), &node("n1", json!({})))
            .await
            .unwrap_err(),
    );
    assert_eq!(e.code, 500);
    assert!(e.message.contains("failed calling webhook \"strict\""));
}

#[tokio::test]
async fn the_server_clock_can_be_simulated() {
    let t: jiff::Timestamp = "2030-01-01T00:00:00Z".parse().unwrap();
    let opts = kerf_sim::SimOptions {
        clock: kerf_sim::store::SimClock(Arc::new(move || t)),
        ..Default::default()
    };
    let sim = Sim::builder().options(opts).start().await.unwrap();
    let nodes: Api<Node> = Api::all(sim.client().unwrap());
    let n = nodes
        .create(&PostParams::default(), &node("n1", json!({})))
        .await
        .unwrap();
    assert_eq!(n.metadata.creation_timestamp.unwrap().0, t);
}
