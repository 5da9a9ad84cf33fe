//! What kubectl users lean on: `dryRun=All` (`kubectl apply --dry-run=server`: a write is
//! checked, admitted and answered, and nothing is stored), the health endpoints probes ask
//! for, `kubectl get -w` (a watch of Tables, so the columns stay after the first list), and
//! `fieldValidation=Strict` on built-in kinds (`kubectl apply` since 1.27 leaves validation
//! to the server).
#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers outside #[test] fns

mod common;

use common::*;
use k8s_openapi::api::core::v1::Node;
use kerf_api::v1::NodePool;
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use serde_json::json;

fn dry() -> PostParams {
    PostParams {
        dry_run: true,
        ..PostParams::default()
    }
}

#[tokio::test]
async fn a_dry_run_is_checked_and_answered_but_not_stored() {
    let (_sim, client) = start().await;
    let nodes: Api<Node> = Api::all(client.clone());
    let answered = nodes
        .create(&dry(), &node("n1", json!({"a": "1"})))
        .await
        .unwrap();
    assert_eq!(answered.metadata.name.as_deref(), Some("n1"));
    assert_eq!(status(nodes.get("n1").await.unwrap_err()).code, 404);

    // Validation still runs: an invalid NodePool is refused as a real create would be.
    let pools = dynamic::<NodePool>(&client);
    let mut bad = nodepool("bad");
    bad["spec"]["template"]["spec"]["requirements"][0]["operator"] = json!("Sometimes");
    let e = status(
        pools
            .create(&dry(), &serde_json::from_value(bad).unwrap())
            .await
            .unwrap_err(),
    );
    assert_eq!(e.code, 422, "{}", e.message);

    // A patch and a delete answer what they would do and change nothing.
    nodes
        .create(&PostParams::default(), &node("n2", json!({"a": "1"})))
        .await
        .unwrap();
    let pp = PatchParams {
        dry_run: true,
        ..PatchParams::default()
    };
    let patched = nodes
        .patch(
            "n2",
            &pp,
            &Patch::Merge(json!({"metadata": {"labels": {"a": "2"}}})),
        )
        .await
        .unwrap();
    assert_eq!(patched.metadata.labels.unwrap()["a"], "2");
    let dp = DeleteParams {
        dry_run: true,
        ..DeleteParams::default()
    };
    nodes.delete("n2", &dp).await.unwrap();
    let kept = nodes.get("n2").await.unwrap();
    assert_eq!(kept.metadata.labels.unwrap()["a"], "1");
}

#[tokio::test]
async fn readyz_livez_and_healthz_answer_ok() {
    let (_sim, client) = start().await;
    for path in ["/readyz", "/livez", "/healthz"] {
        let req = axum::http::Request::get(path).body(Vec::new()).unwrap();
        assert_eq!(client.request_text(req).await.unwrap(), "ok", "{path}");
    }
}

#[tokio::test]
async fn a_watch_asked_for_tables_sends_each_object_as_a_table_row() {
    let (_sim, client) = start().await;
    create_dynamic(&dynamic::<NodePool>(&client), nodepool("default"))
        .await
        .unwrap();
    let req = table_get("/apis/karpenter.sh/v1/nodepools?watch=true&timeoutSeconds=1");
    let text = client.request_text(req).await.unwrap();
    let first: serde_json::Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    assert_eq!(first["type"], "ADDED", "{text}");
    let table = &first["object"];
    assert_eq!(table["kind"], "Table", "{text}");
    let names: Vec<&str> = table["columnDefinitions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert!(names.contains(&"NodeClass"), "{names:?}");
    assert_eq!(table["rows"][0]["cells"][0], "default", "{text}");
}

#[tokio::test]
async fn a_table_carries_whole_objects_when_asked_so_kubectl_can_sort_by_their_fields() {
    let (_sim, client) = start().await;
    create_dynamic(&dynamic::<NodePool>(&client), nodepool("default"))
        .await
        .unwrap();
    let get = |query: &str| table_get(&format!("/apis/karpenter.sh/v1/nodepools{query}"));
    let whole: serde_json::Value = client.request(get("?includeObject=Object")).await.unwrap();
    let object = &whole["rows"][0]["object"];
    assert_eq!(object["kind"], "NodePool", "{whole}");
    assert!(object["spec"]["template"].is_object(), "{whole}");
    let meta: serde_json::Value = client.request(get("")).await.unwrap();
    assert_eq!(meta["rows"][0]["object"]["kind"], "PartialObjectMetadata");
    let none: serde_json::Value = client.request(get("?includeObject=None")).await.unwrap();
    assert!(none["rows"][0].get("object").is_none(), "{none}");
}

type Request = axum::http::Request<Vec<u8>>;

/// A JSON write with `fieldValidation=Strict`, as kubectl since 1.27 sends one.
fn strict_write(method: &str, path: &str, ct: &str, body: &serde_json::Value) -> Request {
    axum::http::Request::builder()
        .method(method)
        .uri(format!("{path}?fieldValidation=Strict"))
        .header("content-type", ct)
        .body(body.to_string().into_bytes())
        .unwrap()
}

#[tokio::test]
async fn strict_field_validation_refuses_unknown_fields_of_built_in_kinds() {
    let (_sim, client) = start().await;
    let path = "/apis/apps/v1/namespaces/default/deployments";
    let mut web = json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web"},
        "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [
                {"name": "web", "image": "nginx", "resources": {"requests": {"cpu": "1"}}}]}}}});
    let mut bad = web.clone();
    bad["spec"]["bogus"] = json!(1);
    bad["spec"]["template"]["spec"]["containers"][0]["imagePullPolcy"] = json!("Always");
    let req = strict_write("POST", path, "application/json", &bad);
    let e = status(client.request_text(req).await.unwrap_err());
    assert_eq!(e.code, 400, "{}", e.message);
    assert_eq!(
        e.message,
        "strict decoding error: unknown field \"spec.bogus\", unknown field \
         \"spec.template.spec.containers[0].imagePullPolcy\""
    );
    let req = strict_write("POST", path, "application/json", &web);
    client.request_text(req).await.unwrap();
    // kubectl apply's strategic merge patch: its directives are not fields.
    web = json!({"spec": {"template": {"spec": {
        "$setElementOrder/containers": [{"name": "web"}],
        "containers": [{"name": "web", "image": "nginx:2"}]}}}});
    let ct = "application/strategic-merge-patch+json";
    let req = strict_write("PATCH", &format!("{path}/web"), ct, &web);
    client.request_text(req).await.unwrap();
}
