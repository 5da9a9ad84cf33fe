//! The real webhook binary, started as a process against a local Lambda Runtime API, moto
//! (its secret in SSM, the provisioning queue in SQS) and the in-process API server, fed the
//! sample events in `events/`.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers outside #[test] fns

use std::path::Path;
use std::time::Duration;

use kerf_e2e::account;
use kerf_e2e::lambda::{Function, RuntimeApi};
use kerf_e2e::world::{getting_started, read};
use serde_json::{Value, json};

const LIMIT: Duration = Duration::from_secs(20);

fn fixture(name: &str) -> Value {
    serde_json::from_str(&read(&format!("events/{name}"))).unwrap()
}

fn review(answer: &Value) -> Value {
    serde_json::from_str(answer["body"].as_str().unwrap()).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_binary_answers_every_webhook_fixture() {
    let (_guard, moto) = kerf_e2e::moto::fresh().await;
    let acct = account::seed(&moto.url).await;
    let world = getting_started().await.unwrap();
    let api = RuntimeApi::start().await;
    let first = api.push(fixture("webhook-nodepool-valid.json"));
    let log = std::env::temp_dir().join(format!("kerf-webhook-{}.log", std::process::id()));
    let f = Function::start(
        Path::new(env!("CARGO_BIN_EXE_kerf-webhook")),
        &api,
        &acct.env(world.sim().unwrap().url()),
        Some(&log),
    );
    let valid = api.wait(&first, LIMIT).await.unwrap();
    eprintln!("cold start (debug build): {:?}", f.started.elapsed());
    assert_eq!(valid["statusCode"], 200);
    assert_eq!(valid["headers"]["content-type"], "application/json");
    assert_eq!(review(&valid)["response"]["allowed"], true);

    let invalid = api
        .invoke(fixture("webhook-nodepool-invalid.json"), LIMIT)
        .await
        .unwrap();
    let msg = review(&invalid)["response"]["status"]["message"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(msg.contains("no valid capacity type"), "{msg}");

    let pod = api
        .invoke(fixture("webhook-pod-unschedulable.json"), LIMIT)
        .await
        .unwrap();
    assert_eq!(review(&pod)["response"]["allowed"], true);
    assert_eq!(
        acct.queued().await,
        1,
        "the hint is on the provisioning queue"
    );

    let node = api
        .invoke(fixture("webhook-node-create.json"), LIMIT)
        .await
        .unwrap();
    assert_eq!(
        review(&node)["response"]["allowed"],
        true,
        "a node no claim knows is let through"
    );

    let mut wrong = fixture("webhook-pod-unschedulable.json");
    wrong["rawPath"] = json!("/not-the-secret/admit");
    let denied = api.invoke(wrong, LIMIT).await.unwrap();
    assert_eq!(denied["statusCode"], 401);
    assert_eq!(
        acct.queued().await,
        1,
        "nothing happened without the secret"
    );
    let mut big = fixture("webhook-pod-unschedulable.json");
    big["body"] = json!("x".repeat((1 << 20) + 1));
    assert_eq!(api.invoke(big, LIMIT).await.unwrap()["statusCode"], 413);
    drop(f);
    // The function logged every request above, the refused one too, but never its secret.
    let out = std::fs::read_to_string(&log).unwrap();
    assert!(out.contains("rejected an unauthenticated request"), "{out}");
    assert!(
        !out.contains(account::SECRET),
        "the secret is in the logs:\n{out}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_missing_secret_fails_the_start() {
    let (_guard, moto) = kerf_e2e::moto::fresh().await;
    let acct = account::seed(&moto.url).await;
    let api = RuntimeApi::start().await;
    let mut env = acct.env("http://127.0.0.1:9");
    env.retain(|(k, _)| *k != "KERF_WEBHOOK_SECRET_PARAMETER");
    env.push(("KERF_WEBHOOK_SECRET_PARAMETER", "/kerf/missing".into()));
    let log = std::env::temp_dir().join(format!("kerf-webhook-start-{}.log", std::process::id()));
    let mut f = Function::start(
        Path::new(env!("CARGO_BIN_EXE_kerf-webhook")),
        &api,
        &env,
        Some(&log),
    );
    let status = f.wait_exit(LIMIT).expect("the function exits");
    assert!(!status.success());
    let out = std::fs::read_to_string(&log).unwrap();
    assert!(
        out.contains("webhook secret") && out.contains("GetParameter"),
        "{out}"
    );
}

/// An API server that accepts connections and never answers.
async fn silent_api_server() -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((socket, _)) = listener.accept().await {
            held.push(socket);
        }
    });
    format!("http://{addr}")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_silent_api_server_gets_the_fail_safe_answer_within_the_deadline() {
    let (_guard, moto) = kerf_e2e::moto::fresh().await;
    let acct = account::seed(&moto.url).await;
    let kube = silent_api_server().await;
    let api = RuntimeApi::start().await;
    let _f = Function::start(
        Path::new(env!("CARGO_BIN_EXE_kerf-webhook")),
        &api,
        &acct.env(&kube),
        None,
    );
    for name in ["webhook-node-create.json", "webhook-pod-unschedulable.json"] {
        let started = std::time::Instant::now();
        let answer = api.invoke(fixture(name), LIMIT).await.unwrap();
        let took = started.elapsed();
        assert_eq!(answer["statusCode"], 200, "{name}");
        assert_eq!(
            review(&answer)["response"]["allowed"],
            true,
            "{name}: a workload is never blocked"
        );
        assert!(
            took < Duration::from_millis(2_500),
            "{name}: answered after {took:?}, past the API server's patience"
        );
    }
}
