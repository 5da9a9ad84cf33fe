//! Server-side apply and managedFields through a real kube::Client.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers outside #[test] fns

mod common;

use common::*;
use k8s_openapi::api::core::v1::{ConfigMap, Node, Pod};
use kerf_api::v1::NodePool;
use kube::api::{Api, DynamicObject, Patch, PatchParams, PostParams};
use serde_json::{Value, json};

fn cm(data: Value) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": data})
}

async fn apply_cm(api: &Api<ConfigMap>, manager: &str, data: Value) -> kube::Result<ConfigMap> {
    api.patch("c", &PatchParams::apply(manager), &Patch::Apply(cm(data)))
        .await
}

/// The managedFields of an object as JSON entries.
fn managed<T: serde::Serialize>(obj: &T) -> Vec<Value> {
    let v = serde_json::to_value(obj).unwrap();
    v["metadata"]["managedFields"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

/// The fieldsV1 of one manager's entry.
fn fields_of<T: serde::Serialize>(obj: &T, manager: &str) -> Value {
    managed(obj)
        .into_iter()
        .find(|e| e["manager"] == manager)
        .map(|e| e["fieldsV1"].clone())
        .unwrap_or(Value::Null)
}

fn data(c: &ConfigMap) -> Value {
    serde_json::to_value(c.data.clone().unwrap_or_default()).unwrap()
}

#[tokio::test]
async fn apply_creates_and_reapply_is_idempotent() {
    let (sim, client) = start().await;
    let api: Api<ConfigMap> = Api::namespaced(client, "default");
    let created = apply_cm(&api, "m1", json!({"a": "1"})).await.unwrap();
    assert_eq!(sim.requests().last().unwrap().status, 201);
    let entries = managed(&created);
    assert_eq!(entries.len(), 1);
    let e = &entries[0];
    assert_eq!(
        (
            &e["manager"],
            &e["operation"],
            &e["apiVersion"],
            &e["fieldsType"]
        ),
        (
            &json!("m1"),
            &json!("Apply"),
            &json!("v1"),
            &json!("FieldsV1")
        )
    );
    assert_eq!(e["fieldsV1"], json!({"f:data": {"f:a": {}}}));
    assert!(e["time"].as_str().is_some_and(|t| t.ends_with('Z')));
    assert!(e.get("subresource").is_none());

    let again = apply_cm(&api, "m1", json!({"a": "1"})).await.unwrap();
    assert_eq!(sim.requests().last().unwrap().status, 200);
    assert_eq!(
        again.metadata.resource_version,
        created.metadata.resource_version
    );
    assert_eq!(managed(&again), entries);
}

#[tokio::test]
async fn managers_applying_different_fields_coexist() {
    let (_sim, client) = start().await;
    let api: Api<ConfigMap> = Api::namespaced(client, "default");
    apply_cm(&api, "m1", json!({"a": "1"})).await.unwrap();
    let both = apply_cm(&api, "m2", json!({"b": "2"})).await.unwrap();
    assert_eq!(data(&both), json!({"a": "1", "b": "2"}));
    assert_eq!(fields_of(&both, "m1"), json!({"f:data": {"f:a": {}}}));
    assert_eq!(fields_of(&both, "m2"), json!({"f:data": {"f:b": {}}}));
}

#[tokio::test]
async fn conflicting_apply_is_409_until_forced() {
    let (_sim, client) = start().await;
    let api: Api<ConfigMap> = Api::namespaced(client, "default");
    apply_cm(&api, "m1", json!({"a": "1", "c": "1"}))
        .await
        .unwrap();
    let e = status(apply_cm(&api, "m2", json!({"a": "2"})).await.unwrap_err());
    assert_eq!((e.code, e.reason.as_str()), (409, "Conflict"));
    assert_eq!(
        e.message,
        "Apply failed with 1 conflict: conflict with \"m1\": .data.a"
    );
    let causes = e.details.unwrap().causes;
    assert_eq!(causes.len(), 1);
    assert_eq!(
        (
            causes[0].reason.as_str(),
            causes[0].message.as_str(),
            causes[0].field.as_str()
        ),
        ("FieldManagerConflict", "conflict with \"m1\"", ".data.a")
    );
    assert_eq!(data(&api.get("c").await.unwrap())["a"], "1");

    let pp = PatchParams::apply("m2").force();
    let forced = api
        .patch("c", &pp, &Patch::Apply(cm(json!({"a": "2"}))))
        .await
        .unwrap();
    assert_eq!(data(&forced), json!({"a": "2", "c": "1"}));
    assert_eq!(fields_of(&forced, "m1"), json!({"f:data": {"f:c": {}}}));
    assert_eq!(fields_of(&forced, "m2"), json!({"f:data": {"f:a": {}}}));
}

#[tokio::test]
async fn applying_the_same_value_shares_ownership() {
    let (_sim, client) = start().await;
    let api: Api<ConfigMap> = Api::namespaced(client, "default");
    apply_cm(&api, "m1", json!({"a": "1"})).await.unwrap();
    let shared = apply_cm(&api, "m2", json!({"a": "1"})).await.unwrap();
    assert_eq!(fields_of(&shared, "m1"), json!({"f:data": {"f:a": {}}}));
    assert_eq!(fields_of(&shared, "m2"), json!({"f:data": {"f:a": {}}}));

    let e = status(apply_cm(&api, "m3", json!({"a": "3"})).await.unwrap_err());
    assert_eq!(
        e.message,
        "Apply failed with 2 conflicts: conflicts with \"m1\":\n- .data.a\nconflicts with \"m2\":\n- .data.a"
    );
    let managers: Vec<String> = e
        .details
        .unwrap()
        .causes
        .into_iter()
        .map(|c| c.message)
        .collect();
    assert_eq!(managers, ["conflict with \"m1\"", "conflict with \"m2\""]);
}

#[tokio::test]
async fn omitted_fields_are_removed_unless_someone_else_owns_them() {
    let (_sim, client) = start().await;
    let api: Api<ConfigMap> = Api::namespaced(client, "default");
    apply_cm(&api, "m1", json!({"a": "1", "b": "1", "c": "1"}))
        .await
        .unwrap();
    apply_cm(&api, "m2", json!({"c": "1"})).await.unwrap();
    let after = apply_cm(&api, "m1", json!({"a": "1"})).await.unwrap();
    assert_eq!(data(&after), json!({"a": "1", "c": "1"}));
    assert_eq!(fields_of(&after, "m1"), json!({"f:data": {"f:a": {}}}));
    assert_eq!(fields_of(&after, "m2"), json!({"f:data": {"f:c": {}}}));

    let emptied = api
        .patch(
            "c",
            &PatchParams::apply("m1"),
            &Patch::Apply(json!({"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": "c"}})),
        )
        .await
        .unwrap();
    assert_eq!(data(&emptied), json!({"c": "1"}));
    assert_eq!(fields_of(&emptied, "m1"), Value::Null);
}

#[tokio::test]
async fn updates_record_ownership_and_conflict_with_apply() {
    let (_sim, client) = start().await;
    let api: Api<ConfigMap> = Api::namespaced(client, "default");
    let created = api
        .create(
            &PostParams {
                field_manager: Some("creator".into()),
                ..PostParams::default()
            },
            &serde_json::from_value(cm(json!({"x": "0"}))).unwrap(),
        )
        .await
        .unwrap();
    let entry = &managed(&created)[0];
    assert_eq!(
        (&entry["manager"], &entry["operation"]),
        (&json!("creator"), &json!("Update"))
    );
    assert_eq!(entry["fieldsV1"], json!({"f:data": {".": {}, "f:x": {}}}));

    let editor = PatchParams {
        field_manager: Some("editor".into()),
        ..PatchParams::default()
    };
    let patched = api
        .patch("c", &editor, &Patch::Merge(json!({"data": {"a": "1"}})))
        .await
        .unwrap();
    assert_eq!(
        fields_of(&patched, "editor"),
        json!({"f:data": {"f:a": {}}})
    );
    assert_eq!(
        fields_of(&patched, "creator"),
        json!({"f:data": {".": {}, "f:x": {}}})
    );

    let e = status(apply_cm(&api, "m2", json!({"a": "2"})).await.unwrap_err());
    let cause = &e.details.unwrap().causes[0];
    assert_eq!(
        (cause.message.as_str(), cause.field.as_str()),
        ("conflict with \"editor\" using v1", ".data.a")
    );

    // A PUT by another manager takes the field it changes.
    let mut fresh = api.get("c").await.unwrap();
    fresh
        .data
        .get_or_insert_default()
        .insert("a".into(), "9".into());
    let put = PostParams {
        field_manager: Some("putter".into()),
        ..PostParams::default()
    };
    let replaced = api.replace("c", &put, &fresh).await.unwrap();
    assert_eq!(
        fields_of(&replaced, "putter"),
        json!({"f:data": {"f:a": {}}})
    );
    assert_eq!(fields_of(&replaced, "editor"), Value::Null);

    // An explicit empty managedFields list clears the entries.
    let reset = api
        .patch(
            "c",
            &editor,
            &Patch::Merge(json!({"metadata": {"managedFields": []}})),
        )
        .await
        .unwrap();
    assert!(managed(&reset).is_empty());
}

#[tokio::test]
async fn keyed_list_items_from_two_managers_are_both_kept() {
    let (_sim, client) = start().await;
    let pods: Api<Pod> = Api::namespaced(client, "default");
    let pod = |containers: Value| {
        json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
            "spec": {"containers": containers}})
    };
    let c = |name: &str| json!({"name": name, "image": "busybox"});
    let apply = |m: &'static str, body: Value| {
        let pods = pods.clone();
        async move {
            pods.patch("p", &PatchParams::apply(m), &Patch::Apply(body))
                .await
        }
    };
    apply("m1", pod(json!([c("a")]))).await.unwrap();
    let both = apply("m2", pod(json!([c("b")]))).await.unwrap();
    let names: Vec<String> = both
        .spec
        .as_ref()
        .unwrap()
        .containers
        .iter()
        .map(|c| c.name.clone())
        .collect();
    assert_eq!(names, ["a", "b"]);
    assert_eq!(
        fields_of(&both, "m2"),
        json!({"f:spec": {"f:containers": {"k:{\"name\":\"b\"}":
            {".": {}, "f:image": {}, "f:name": {}}}}})
    );

    let one = apply("m1", pod(json!([]))).await.unwrap();
    let names: Vec<String> = one
        .spec
        .unwrap()
        .containers
        .into_iter()
        .map(|c| c.name)
        .collect();
    assert_eq!(names, ["b"]);
}

#[tokio::test]
async fn status_applies_record_the_subresource_and_merge_conditions() {
    let (_sim, client) = start().await;
    let nodes: Api<Node> = Api::all(client.clone());
    nodes
        .create(&PostParams::default(), &node("n1", json!({})))
        .await
        .unwrap();
    let cond = |t: &str| {
        json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"},
            "status": {"conditions": [{"type": t, "status": "True"}]}})
    };
    nodes
        .patch_status(
            "n1",
            &PatchParams::apply("kubelet"),
            &Patch::Apply(cond("Ready")),
        )
        .await
        .unwrap();
    let n = nodes
        .patch_status(
            "n1",
            &PatchParams::apply("npd"),
            &Patch::Apply(cond("DiskPressure")),
        )
        .await
        .unwrap();
    let types: Vec<String> = n
        .status
        .as_ref()
        .unwrap()
        .conditions
        .iter()
        .flatten()
        .map(|c| c.type_.clone())
        .collect();
    assert_eq!(types, ["Ready", "DiskPressure"]);
    let entry = managed(&n)
        .into_iter()
        .find(|e| e["manager"] == "npd")
        .unwrap();
    assert_eq!(
        (&entry["operation"], &entry["subresource"]),
        (&json!("Apply"), &json!("status"))
    );
    assert_eq!(
        entry["fieldsV1"],
        json!({"f:status": {"f:conditions": {"k:{\"type\":\"DiskPressure\"}":
            {".": {}, "f:status": {}, "f:type": {}}}}})
    );

    // The same manager on the main endpoint is a different entry; status is not its to own.
    let main = nodes
        .patch(
            "n1",
            &PatchParams::apply("npd"),
            &Patch::Apply(cond("Other")),
        )
        .await
        .unwrap();
    assert_eq!(main.status.unwrap().conditions.unwrap().len(), 2);
}

#[tokio::test]
async fn custom_resources_follow_their_schema_list_types() {
    let (_sim, client) = start().await;
    let pools: Api<DynamicObject> = dynamic::<NodePool>(&client);
    let pool = |values: Value| {
        let mut p = nodepool("p1");
        p["spec"]["template"]["spec"]["requirements"][0]["values"] = values;
        serde_json::from_value::<DynamicObject>(p).unwrap()
    };
    let created = pools
        .patch(
            "p1",
            &PatchParams::apply("m1"),
            &Patch::Apply(pool(json!(["amd64"]))),
        )
        .await
        .unwrap();
    let f = fields_of(&created, "m1");
    assert_eq!(
        f["f:spec"]["f:template"]["f:spec"]["f:requirements"],
        json!({})
    );

    let e = status(
        pools
            .patch(
                "p1",
                &PatchParams::apply("m2"),
                &Patch::Apply(pool(json!(["arm64"]))),
            )
            .await
            .unwrap_err(),
    );
    let cause = &e.details.unwrap().causes[0];
    assert_eq!(cause.field, ".spec.template.spec.requirements");

    let status_cond = |t: &str| {
        json!({"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": {"name": "p1"},
            "status": {"conditions": [{"type": t, "status": "True", "reason": "R",
                "message": "", "lastTransitionTime": "2026-01-01T00:00:00Z"}]}})
    };
    let dyn_status = |v: Value| Patch::Apply(serde_json::from_value::<DynamicObject>(v).unwrap());
    pools
        .patch_status(
            "p1",
            &PatchParams::apply("a"),
            &dyn_status(status_cond("Ready")),
        )
        .await
        .unwrap();
    let p = pools
        .patch_status(
            "p1",
            &PatchParams::apply("b"),
            &dyn_status(status_cond("NodeClassReady")),
        )
        .await
        .unwrap();
    assert_eq!(p.data["status"]["conditions"].as_array().unwrap().len(), 2);
    let b = managed(&p)
        .into_iter()
        .find(|e| e["manager"] == "b")
        .unwrap();
    assert_eq!(b["subresource"], "status");
}
