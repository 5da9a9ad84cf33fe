//! `kerf webhooks`: the configurations rendered from a stack's outputs (the outputs list and
//! the whole describe-stacks document), every admission fixture in `events/` routed by the
//! rules and matchConditions to exactly one webhook whose failurePolicy is the handler's own
//! fail-open rule, the matchConditions (run with the CEL interpreter the in-process API server
//! uses) passing only the transitions Kerf acts on, and bad input naming its file with exit
//! code 2.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;
use std::process::Command;

use clap::Parser;
use kerf_cli::args::Cli;
use kerf_cli::error::CliError;
use kerf_schema::cel::Program;
use serde::Deserialize;
use serde_json::{Value, json};

const URL: &str = "https://abcdefghij0123456789klmnop.lambda-url.us-west-2.on.aws/Zk3mQ9vR2xT7bN4pL8cW1yH6dF0sJ5gA/admit";

fn repo(path: &str) -> String {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    root.join(path).display().to_string()
}

fn fixture(name: &str) -> String {
    repo(&format!("shared/cli/tests/fixtures/webhooks/{name}"))
}

fn kerf(args: &[&str]) -> Result<String, CliError> {
    let cli = Cli::try_parse_from(std::iter::once("kerf").chain(args.iter().copied())).unwrap();
    kerf_cli::run(&cli, 0).map(|o| o.stdout)
}

fn render(outputs: &str) -> Vec<Value> {
    let yaml = kerf(&[
        "webhooks",
        "--stack-outputs",
        &fixture(outputs),
        "--secret-file",
        &fixture("secret"),
    ])
    .unwrap();
    yaml_serde::Deserializer::from_str(&yaml)
        .map(|d| serde_json::to_value(yaml_serde::Value::deserialize(d).unwrap()).unwrap())
        .collect()
}

/// Every webhook of both configurations.
fn webhooks(docs: &[Value]) -> Vec<Value> {
    docs.iter()
        .flat_map(|d| d["webhooks"].as_array().unwrap().clone())
        .collect()
}

/// A matchCondition evaluated as the API server does, `object`/`oldObject` bound.
fn cel(expression: &str, object: &Value, old: Option<&Value>) -> bool {
    let rule = expression
        .replace("oldObject", "oldSelf")
        .replace("object", "self");
    let program = Program::compile(&rule).unwrap_or_else(|e| panic!("{expression}: {e}"));
    program
        .eval(object, old)
        .unwrap_or_else(|e| panic!("{expression} on {object}: {e}"))
}

/// A matchCondition over the request (`request.userInfo`), evaluated with `request` bound.
fn cel_request(expression: &str, request: &Value) -> bool {
    let rule = expression.replace("request", "self");
    let program = Program::compile(&rule).unwrap_or_else(|e| panic!("{expression}: {e}"));
    program
        .eval(request, None)
        .unwrap_or_else(|e| panic!("{expression} on {request}: {e}"))
}

/// A request by someone other than Kerf (a kubelet), for conditions over the request.
fn someone_else() -> Value {
    json!({"userInfo": {"username": "system:node:n1", "groups": ["system:nodes", "system:authenticated"]}})
}

fn conditions_pass(w: &Value, object: &Value, old: Option<&Value>) -> bool {
    conditions_pass_for(w, &someone_else(), object, old)
}

fn conditions_pass_for(w: &Value, request: &Value, object: &Value, old: Option<&Value>) -> bool {
    let conditions = w["matchConditions"].as_array().cloned().unwrap_or_default();
    conditions.iter().all(|c| {
        let expression = c["expression"].as_str().unwrap();
        if expression.contains("request.") {
            cel_request(expression, request)
        } else {
            cel(expression, object, old)
        }
    })
}

fn rule_matches(w: &Value, r: &kerf_control::webhook::Request) -> bool {
    let resource = if r.sub_resource.is_empty() {
        r.resource.clone()
    } else {
        format!("{}/{}", r.resource, r.sub_resource)
    };
    let has = |v: &Value, s: &str| v.as_array().unwrap().iter().any(|x| x == s);
    w["rules"].as_array().unwrap().iter().any(|rule| {
        has(&rule["apiGroups"], &r.group)
            && has(&rule["resources"], &resource)
            && has(&rule["operations"], &r.operation)
    })
}

/// The AdmissionReview inside a Function URL event fixture.
fn review(event: &str) -> Value {
    let e: Value = serde_json::from_str(&std::fs::read_to_string(repo(event)).unwrap()).unwrap();
    serde_json::from_str(e["body"].as_str().unwrap()).unwrap()
}

#[test]
fn renders_both_configurations_pointing_at_the_secret_url() {
    let docs = render("outputs.json");
    let kinds: Vec<&str> = docs.iter().map(|d| d["kind"].as_str().unwrap()).collect();
    assert_eq!(
        kinds,
        [
            "ValidatingWebhookConfiguration",
            "MutatingWebhookConfiguration"
        ]
    );
    for d in &docs {
        assert_eq!(d["apiVersion"], "admissionregistration.k8s.io/v1");
        assert_eq!(d["metadata"]["name"], "kerf");
        assert_eq!(d["metadata"]["annotations"]["kerf.dev/cluster"], "demo");
    }
    let all = webhooks(&docs);
    let names: Vec<&str> = all.iter().map(|w| w["name"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        [
            "validation.kerf.dev",
            "provisioning.kerf.dev",
            "startup.kerf.dev",
            "podevents.kerf.dev",
            "initialization.kerf.dev",
            "registration.kerf.dev"
        ]
    );
    for w in &all {
        assert_eq!(w["clientConfig"], json!({"url": URL}), "{}", w["name"]);
        assert_eq!(w["admissionReviewVersions"], json!(["v1"]));
        assert!(w["timeoutSeconds"].as_u64().unwrap() <= 10);
    }
}

#[test]
fn the_describe_stacks_document_gives_the_same_configurations() {
    assert_eq!(render("describe-stacks.json"), render("outputs.json"));
}

#[test]
fn every_admission_fixture_reaches_one_webhook_failing_as_the_handler_does() {
    let all = webhooks(&render("outputs.json"));
    let events = std::fs::read_dir(repo("events")).unwrap();
    let mut seen = 0;
    for path in events.map(|e| e.unwrap().path()) {
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        if !name.starts_with("webhook-") {
            continue;
        }
        let body = review(&format!("events/{name}"));
        let req = kerf_control::webhook::parse(&body).unwrap();
        let object = &body["request"]["object"];
        let old = body["request"].get("oldObject").filter(|o| !o.is_null());
        let hits: Vec<&Value> = all
            .iter()
            .filter(|w| {
                rule_matches(w, &req) && conditions_pass_for(w, &body["request"], object, old)
            })
            .collect();
        assert_eq!(hits.len(), 1, "{name}: reached {hits:?}");
        let fail_open = kerf_control::webhook::fails_open(&req);
        let policy = if fail_open { "Ignore" } else { "Fail" };
        assert_eq!(hits[0]["failurePolicy"], policy, "{name}");
        seen += 1;
    }
    assert!(seen >= 4, "only {seen} webhook fixtures");
}

#[test]
fn kerfs_own_writes_never_reach_the_validation_or_initialization_webhooks() {
    let all = webhooks(&render("outputs.json"));
    let by_name = |n: &str| all.iter().find(|w| w["name"] == n).unwrap().clone();
    let user = |groups: Value| json!({"userInfo": {"username": "u", "groups": groups}});
    let pool = json!({"metadata": {"name": "p"}});
    let validation = by_name("validation.kerf.dev");
    for group in kerf_control::webhook::config::KERF_GROUPS {
        let kerf = user(json!(["system:authenticated", group]));
        assert!(
            !conditions_pass_for(&validation, &kerf, &pool, None),
            "{group}"
        );
    }
    let admin = user(json!(["system:masters", "system:authenticated"]));
    assert!(conditions_pass_for(&validation, &admin, &pool, None));
    assert!(conditions_pass_for(
        &validation,
        &json!({"userInfo": {"username": "u"}}),
        &pool,
        None
    ));
    let lookalike = user(json!(["kerf:provisionerx", "kerf:"]));
    assert!(conditions_pass_for(&validation, &lookalike, &pool, None));
    let init = by_name("initialization.kerf.dev");
    let kerf_node = node(
        json!({"karpenter.sh/nodepool": "default"}),
        "True",
        json!([]),
    );
    let before = node(
        json!({"karpenter.sh/nodepool": "default"}),
        "False",
        json!([]),
    );
    assert!(conditions_pass(&init, &kerf_node, Some(&before)));
    let kerf = user(json!(["kerf:provisioner"]));
    assert!(!conditions_pass_for(
        &init,
        &kerf,
        &kerf_node,
        Some(&before)
    ));
}

fn pod_scheduled(status: &str, reason: &str) -> Value {
    json!({"metadata": {"name": "p"}, "status": {"phase": "Pending",
        "conditions": [{"type": "PodScheduled", "status": status, "reason": reason}]}})
}

#[test]
fn pod_status_updates_pass_only_when_a_pod_becomes_unschedulable() {
    let all = webhooks(&render("outputs.json"));
    let w = all
        .iter()
        .find(|w| w["name"] == "provisioning.kerf.dev")
        .unwrap();
    let fresh = json!({"metadata": {"name": "p"}, "status": {"phase": "Pending"}});
    let unschedulable = pod_scheduled("False", "Unschedulable");
    assert!(conditions_pass(w, &unschedulable, Some(&fresh)));
    assert!(!conditions_pass(w, &unschedulable, Some(&unschedulable)));
    let gated = pod_scheduled("False", "SchedulingGated");
    assert!(!conditions_pass(w, &gated, Some(&fresh)));
    let running = json!({"metadata": {"name": "p"}, "status": {"phase": "Running",
        "conditions": [{"type": "PodScheduled", "status": "True"}]}});
    assert!(!conditions_pass(w, &running, Some(&unschedulable)));
}

#[test]
fn pod_deletions_pass_only_for_a_bound_pod_on_its_first_delete() {
    let all = webhooks(&render("outputs.json"));
    let w = all
        .iter()
        .find(|w| w["name"] == "podevents.kerf.dev")
        .unwrap();
    let bound = json!({"metadata": {"name": "p"}, "spec": {"nodeName": "n1"}});
    assert!(conditions_pass(w, &Value::Null, Some(&bound)));
    let unbound = json!({"metadata": {"name": "p"}, "spec": {}});
    assert!(!conditions_pass(w, &Value::Null, Some(&unbound)));
    let mut terminating = bound.clone();
    terminating["metadata"]["deletionTimestamp"] = json!("2026-01-01T00:00:00Z");
    assert!(
        !conditions_pass(w, &Value::Null, Some(&terminating)),
        "the kubelet's final delete is not a second event"
    );
}

#[test]
fn pod_status_updates_are_timed_only_when_a_pod_starts_running() {
    let all = webhooks(&render("outputs.json"));
    let w = all
        .iter()
        .find(|w| w["name"] == "startup.kerf.dev")
        .unwrap();
    let pending = pod_scheduled("True", "");
    let mut running = pending.clone();
    running["status"]["phase"] = json!("Running");
    assert!(conditions_pass(w, &running, Some(&pending)));
    assert!(
        !conditions_pass(w, &running, Some(&running)),
        "a later status update"
    );
    assert!(!conditions_pass(w, &pending, Some(&pending)));
    let fresh = json!({"metadata": {"name": "p"}});
    assert!(conditions_pass(w, &running, Some(&fresh)));
    let mut succeeded = running.clone();
    succeeded["status"]["phase"] = json!("Succeeded");
    assert!(!conditions_pass(w, &succeeded, Some(&running)));
}

fn node(labels: Value, ready: &str, taints: Value) -> Value {
    json!({"metadata": {"name": "n", "labels": labels}, "spec": {"taints": taints},
        "status": {"conditions": [{"type": "Ready", "status": ready}]}})
}

#[test]
fn node_updates_pass_only_when_an_uninitialized_kerf_node_progresses() {
    let all = webhooks(&render("outputs.json"));
    let w = all
        .iter()
        .find(|w| w["name"] == "initialization.kerf.dev")
        .unwrap();
    let ours = json!({"karpenter.sh/nodepool": "default"});
    let taint = json!([{"key": "node.cilium.io/agent-not-ready", "effect": "NoSchedule"}]);
    let booting = node(ours.clone(), "False", taint.clone());
    let ready = node(ours.clone(), "True", taint.clone());
    let untainted = node(ours.clone(), "False", json!([]));
    assert!(conditions_pass(w, &ready, Some(&booting)));
    assert!(conditions_pass(w, &untainted, Some(&booting)));
    assert!(!conditions_pass(w, &ready, Some(&ready)), "a heartbeat");
    let initialized =
        json!({"karpenter.sh/nodepool": "default", "karpenter.sh/initialized": "true"});
    let before = node(initialized.clone(), "False", taint.clone());
    assert!(!conditions_pass(
        w,
        &node(initialized, "True", taint.clone()),
        Some(&before)
    ));
    let theirs = json!({"eks.amazonaws.com/nodegroup": "system"});
    let before = node(theirs.clone(), "False", taint.clone());
    assert!(!conditions_pass(
        w,
        &node(theirs, "True", taint),
        Some(&before)
    ));
}

#[test]
fn only_kerf_nodes_are_sent_for_registration() {
    let all = webhooks(&render("outputs.json"));
    let w = all
        .iter()
        .find(|w| w["name"] == "registration.kerf.dev")
        .unwrap();
    let ours = node(
        json!({"karpenter.sh/nodepool": "default"}),
        "False",
        json!([]),
    );
    assert!(conditions_pass(w, &ours, None));
    let theirs = node(json!({"kubernetes.io/os": "linux"}), "False", json!([]));
    assert!(!conditions_pass(w, &theirs, None));
    let bare = json!({"metadata": {"name": "n"}, "spec": {}});
    assert!(!conditions_pass(w, &bare, None));
}

fn run_binary(outputs: &str, secret: &str) -> (i32, String, String) {
    run_binary_with(outputs, secret, &[])
}

fn run_binary_with(outputs: &str, secret: &str, extra: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_kerf"))
        .args([
            "webhooks",
            "--stack-outputs",
            outputs,
            "--secret-file",
            secret,
        ])
        .args(extra)
        .output()
        .unwrap();
    (
        out.status.code().unwrap(),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

#[test]
fn the_binary_prints_the_configurations_and_exits_0() {
    let (code, stdout, _) = run_binary(&fixture("outputs.json"), &fixture("secret"));
    assert_eq!(code, 0);
    assert_eq!(stdout.matches(URL).count(), 6, "one URL per webhook");
}

#[test]
fn rotation_moves_every_webhook_to_the_next_secret_only_when_asked() {
    let next = "N3xtSecretN3xtSecretN3xtSecret01";
    let both = temp_file(
        "rotating",
        &format!("Zk3mQ9vR2xT7bN4pL8cW1yH6dF0sJ5gA {next}\n"),
    );
    let (code, stdout, stderr) = run_binary(&fixture("outputs.json"), &both);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(stdout.matches(URL).count(), 6, "still the current secret");
    assert!(!stdout.contains(next));
    let (code, stdout, stderr) = run_binary_with(&fixture("outputs.json"), &both, &["--rotate"]);
    assert_eq!(code, 0, "{stderr}");
    let next_url = URL.replace("Zk3mQ9vR2xT7bN4pL8cW1yH6dF0sJ5gA", next);
    assert_eq!(stdout.matches(&next_url).count(), 6, "{stdout}");
    assert!(!stdout.contains("Zk3mQ9vR2xT7bN4pL8cW1yH6dF0sJ5gA"));
    let secret = std::fs::read_to_string(&both).unwrap();
    for url in [URL.to_string(), next_url] {
        let path = url.split(".on.aws").nth(1).unwrap();
        assert!(
            kerf_control::handlers::webhook::authorized(path, &secret),
            "the webhook accepts {path} while rotating"
        );
    }
    let (code, stdout, stderr) =
        run_binary_with(&fixture("outputs.json"), &fixture("secret"), &["--rotate"]);
    assert_eq!(code, 2);
    assert!(stdout.is_empty());
    assert!(stderr.contains("--rotate needs"), "{stderr}");
    let three = temp_file("three", "a b c");
    let (code, _, stderr) = run_binary(&fixture("outputs.json"), &three);
    assert_eq!(code, 2);
    assert!(stderr.contains("at most two secrets"), "{stderr}");
}

#[test]
fn a_missing_output_names_the_file_and_the_output_with_exit_code_2() {
    let file = fixture("outputs-without-url.json");
    let (code, stdout, stderr) = run_binary(&file, &fixture("secret"));
    assert_eq!(code, 2);
    assert!(stdout.is_empty());
    assert!(stderr.contains(&file), "{stderr}");
    assert!(stderr.contains("missing output WebhookUrl"), "{stderr}");
}

fn temp_file(test: &str, text: &str) -> String {
    let dir = std::env::temp_dir().join(format!("kerf-webhooks-{}-{test}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("input");
    std::fs::write(&path, text).unwrap();
    path.display().to_string()
}

#[test]
fn bad_input_names_its_file_with_exit_code_2() {
    let slash = temp_file("slash", "abc/def\n");
    let (code, _, stderr) = run_binary(&fixture("outputs.json"), &slash);
    assert_eq!(code, 2);
    assert!(
        stderr.contains(&slash) && stderr.contains("one line of letters"),
        "{stderr}"
    );
    let empty = temp_file("empty", "\n");
    let (code, _, stderr) = run_binary(&fixture("outputs.json"), &empty);
    assert_eq!(code, 2);
    assert!(stderr.contains("secret is empty"), "{stderr}");
    let not_json = temp_file("notjson", "WebhookUrl: https://x/");
    let (code, _, stderr) = run_binary(&not_json, &fixture("secret"));
    assert_eq!(code, 2);
    assert!(
        stderr.contains(&not_json) && stderr.contains("not JSON"),
        "{stderr}"
    );
    let http = temp_file(
        "http",
        r#"[{"OutputKey": "WebhookUrl", "OutputValue": "http://insecure/"}]"#,
    );
    let (code, _, stderr) = run_binary(&http, &fixture("secret"));
    assert_eq!(code, 2);
    assert!(stderr.contains("not an https URL"), "{stderr}");
    let (code, _, stderr) = run_binary(&fixture("missing.json"), &fixture("secret"));
    assert_eq!(code, 2);
    assert!(stderr.contains("missing.json"), "{stderr}");
}

#[test]
fn both_inputs_cannot_come_from_stdin() {
    let err = kerf(&["webhooks", "--stack-outputs", "-", "--secret-file", "-"]).unwrap_err();
    assert_eq!(err.exit_code(), 2);
}
