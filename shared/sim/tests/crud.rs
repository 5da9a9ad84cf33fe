//! CRUD, generateName, conflicts, patches, selectors and errors through a real kube::Client.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers outside #[test] fns

mod common;

use common::*;
use k8s_openapi::api::core::v1::{Namespace, Node, Pod};
use kerf_api::v1::NodePool;
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams, PostParams};
use serde_json::json;

#[tokio::test]
async fn create_get_replace_conflict_and_generate_name() {
    let (_sim, client) = start().await;
    let nodes: Api<Node> = Api::all(client.clone());
    let created = nodes
        .create(&PostParams::default(), &node("n1", json!({"a": "1"})))
        .await
        .unwrap();
    let m = &created.metadata;
    assert!(m.uid.as_ref().is_some_and(|u| u.len() == 36));
    assert!(m.creation_timestamp.is_some());
    let rv1 = m.resource_version.clone().unwrap();

    let dup = status(
        nodes
            .create(&PostParams::default(), &node("n1", json!({})))
            .await
            .unwrap_err(),
    );
    assert_eq!((dup.code, dup.reason.as_str()), (409, "AlreadyExists"));
    assert_eq!(dup.message, "nodes \"n1\" already exists");

    let mut fresh = nodes.get("n1").await.unwrap();
    fresh
        .metadata
        .labels
        .get_or_insert_default()
        .insert("b".into(), "2".into());
    let replaced = nodes
        .replace("n1", &PostParams::default(), &fresh)
        .await
        .unwrap();
    assert_ne!(
        replaced.metadata.resource_version.as_deref(),
        Some(rv1.as_str())
    );
    let stale = status(
        nodes
            .replace("n1", &PostParams::default(), &fresh)
            .await
            .unwrap_err(),
    );
    assert_eq!((stale.code, stale.reason.as_str()), (409, "Conflict"));
    assert!(
        stale
            .message
            .starts_with("Operation cannot be fulfilled on nodes \"n1\"")
    );

    let gen_node: Node =
        serde_json::from_value(json!({"metadata": {"generateName": "default-"}})).unwrap();
    let g = nodes
        .create(&PostParams::default(), &gen_node)
        .await
        .unwrap();
    let name = g.metadata.name.unwrap();
    assert!(name.starts_with("default-") && name.len() == 13, "{name}");

    let missing = status(nodes.get("nope").await.unwrap_err());
    assert_eq!((missing.code, missing.reason.as_str()), (404, "NotFound"));
    assert_eq!(missing.details.unwrap().kind, "nodes");
    assert!(nodes.get_opt("nope").await.unwrap().is_none());
    let gone = nodes.delete("n1", &DeleteParams::default()).await.unwrap();
    assert!(gone.is_right());
}

#[tokio::test]
async fn merge_json_strategic_and_apply_patches() {
    let (_sim, client) = start().await;
    let nodes: Api<Node> = Api::all(client.clone());
    nodes
        .create(&PostParams::default(), &node("n1", json!({"a": "1"})))
        .await
        .unwrap();
    let pp = PatchParams::default();
    let merged = nodes
        .patch(
            "n1",
            &pp,
            &Patch::Merge(json!({"metadata": {"labels": {"a": null, "b": "2"}}})),
        )
        .await
        .unwrap();
    assert_eq!(
        merged
            .metadata
            .labels
            .unwrap()
            .into_iter()
            .collect::<Vec<_>>(),
        vec![("b".into(), "2".into())]
    );

    let add_fin: json_patch::Patch = serde_json::from_value(json!([
        {"op": "test", "path": "/metadata/finalizers", "value": null},
        {"op": "add", "path": "/metadata/finalizers", "value": ["x/y"]}]))
    .unwrap();
    let j = nodes
        .patch("n1", &pp, &Patch::Json::<()>(add_fin))
        .await
        .unwrap();
    assert_eq!(j.metadata.finalizers, Some(vec!["x/y".to_string()]));
    let bad: json_patch::Patch =
        serde_json::from_value(json!([{"op": "test", "path": "/metadata/name", "value": "other"}]))
            .unwrap();
    let e = status(
        nodes
            .patch("n1", &pp, &Patch::Json::<()>(bad))
            .await
            .unwrap_err(),
    );
    assert_eq!((e.code, e.reason.as_str()), (422, "Invalid"));

    let s = nodes
        .patch(
            "n1",
            &pp,
            &Patch::Strategic(json!({"metadata": {"finalizers": ["z/w"]}})),
        )
        .await
        .unwrap();
    assert_eq!(
        s.metadata.finalizers,
        Some(vec!["x/y".to_string(), "z/w".to_string()])
    );

    let stale = json!({"metadata": {"resourceVersion": "1", "labels": {"c": "3"}}});
    let e = status(
        nodes
            .patch("n1", &pp, &Patch::Merge(stale))
            .await
            .unwrap_err(),
    );
    assert_eq!(e.code, 409);

    let apply = PatchParams::apply("kerf").force();
    let doc = json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n2", "labels": {"k": "v"}}});
    let created = nodes
        .patch("n2", &apply, &Patch::Apply(&doc))
        .await
        .unwrap();
    assert_eq!(created.metadata.labels.unwrap()["k"], "v");
    let doc2 = json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n2", "labels": {"k2": "v2"}}});
    let updated = nodes
        .patch("n2", &apply, &Patch::Apply(&doc2))
        .await
        .unwrap();
    // Server-side apply: the label the manager no longer applies is removed.
    let labels = updated.metadata.labels.unwrap();
    assert_eq!(
        labels.into_iter().collect::<Vec<_>>(),
        [("k2".into(), "v2".into())]
    );

    let pools = dynamic::<NodePool>(&client);
    create_dynamic(&pools, nodepool("p1")).await.unwrap();
    let e = status(
        pools
            .patch("p1", &pp, &Patch::Strategic(json!({"spec": {"weight": 1}})))
            .await
            .unwrap_err(),
    );
    assert_eq!((e.code, e.reason.as_str()), (415, "UnsupportedMediaType"));
}

#[tokio::test]
async fn label_and_field_selectors() {
    let (_sim, client) = start().await;
    let pods: Api<Pod> = Api::namespaced(client.clone(), "default");
    for (name, node, labels) in [
        ("a", "n1", json!({"app": "web", "tier": "fe"})),
        ("b", "n1", json!({"app": "db"})),
        ("c", "n2", json!({"app": "web"})),
    ] {
        pods.create(&PostParams::default(), &pod(name, node, labels))
            .await
            .unwrap();
    }
    let all: Api<Pod> = Api::all(client.clone());
    let names = |l: kube::core::ObjectList<Pod>| -> Vec<String> {
        l.items
            .into_iter()
            .map(|p| p.metadata.name.unwrap())
            .collect()
    };
    let q = |s: &str| ListParams::default().labels(s);
    assert_eq!(names(all.list(&q("app=web")).await.unwrap()), ["a", "c"]);
    assert_eq!(names(all.list(&q("app!=web")).await.unwrap()), ["b"]);
    assert_eq!(names(all.list(&q("app in (db,x)")).await.unwrap()), ["b"]);
    assert_eq!(
        names(all.list(&q("app notin (db)")).await.unwrap()),
        ["a", "c"]
    );
    assert_eq!(names(all.list(&q("tier")).await.unwrap()), ["a"]);
    assert_eq!(names(all.list(&q("!tier")).await.unwrap()), ["b", "c"]);
    let f = |s: &str| ListParams::default().fields(s);
    assert_eq!(
        names(all.list(&f("spec.nodeName=n1")).await.unwrap()),
        ["a", "b"]
    );
    assert_eq!(
        names(
            all.list(&f("metadata.name=c,metadata.namespace=default"))
                .await
                .unwrap()
        ),
        ["c"]
    );
    assert_eq!(
        names(all.list(&f("status.phase=Pending")).await.unwrap()).len(),
        3
    );
    assert!(names(all.list(&f("status.phase!=Pending")).await.unwrap()).is_empty());
    let e = status(all.list(&f("spec.bogus=1")).await.unwrap_err());
    assert_eq!((e.code, e.reason.as_str()), (400, "BadRequest"));
    assert_eq!(e.message, "field label not supported: spec.bogus");
    let ns: Api<Namespace> = Api::all(client);
    ns.create(
        &PostParams::default(),
        &serde_json::from_value(json!({"metadata": {"name": "kube-system"}})).unwrap(),
    )
    .await
    .unwrap();
    assert_eq!(
        ns.get("kube-system").await.unwrap().metadata.name.unwrap(),
        "kube-system"
    );
}

#[tokio::test]
async fn pagination_over_ten_thousand_pods() {
    let (sim, client) = start().await;
    let pods: Api<Pod> = Api::namespaced(client.clone(), "default");
    let creates = (0..10_000).map(|i| {
        let pods = pods.clone();
        async move {
            pods.create(
                &PostParams::default(),
                &pod(&format!("p{i:05}"), "n1", json!({})),
            )
            .await
        }
    });
    let results = futures::future::join_all(creates).await;
    assert!(results.iter().all(Result::is_ok));
    let all: Api<Pod> = Api::all(client);
    let mut lp = ListParams::default().limit(500);
    let (mut seen, mut pages) = (Vec::new(), 0);
    loop {
        let page = all.list(&lp).await.unwrap();
        pages += 1;
        assert!(page.items.len() <= 500);
        seen.extend(page.items.into_iter().map(|p| p.metadata.name.unwrap()));
        match page.metadata.continue_ {
            Some(c) if !c.is_empty() => lp = lp.continue_token(&c),
            _ => break,
        }
    }
    assert_eq!((seen.len(), pages), (10_000, 20));
    assert!(seen.windows(2).all(|w| w[0] < w[1]));

    let first = all.list(&ListParams::default().limit(10)).await.unwrap();
    sim.compact();
    let token = first.metadata.continue_.unwrap();
    let e = status(
        all.list(&ListParams::default().limit(10).continue_token(&token))
            .await
            .unwrap_err(),
    );
    assert_eq!((e.code, e.reason.as_str()), (410, "Expired"));
}

#[tokio::test]
async fn continued_lists_show_the_first_pages_snapshot() {
    let (_sim, client) = start().await;
    let pods: Api<Pod> = Api::namespaced(client.clone(), "default");
    for i in 0..8 {
        pods.create(
            &PostParams::default(),
            &pod(&format!("p{i}"), "n1", json!({"v": "old"})),
        )
        .await
        .unwrap();
    }
    let first = pods.list(&ListParams::default().limit(3)).await.unwrap();
    let names = |l: &kube::core::ObjectList<Pod>| -> Vec<String> {
        l.items
            .iter()
            .map(|p| p.metadata.name.clone().unwrap())
            .collect()
    };
    assert_eq!(names(&first), ["p0", "p1", "p2"]);
    // Changes after the first page: a relabel, a delete, a create and a late delete of a
    // pod already listed.
    let mut p4 = pods.get("p4").await.unwrap();
    p4.metadata.labels = Some([("v".to_string(), "new".to_string())].into());
    pods.replace("p4", &PostParams::default(), &p4)
        .await
        .unwrap();
    pods.delete("p5", &Default::default()).await.unwrap();
    pods.create(
        &PostParams::default(),
        &pod("p3a", "n1", json!({"v": "new"})),
    )
    .await
    .unwrap();
    let token = first.metadata.continue_.clone().unwrap();
    let rest = pods
        .list(&ListParams::default().limit(100).continue_token(&token))
        .await
        .unwrap();
    assert_eq!(
        names(&rest),
        ["p3", "p4", "p5", "p6", "p7"],
        "as of the first page"
    );
    let p4_then = rest
        .items
        .iter()
        .find(|p| p.metadata.name.as_deref() == Some("p4"))
        .unwrap();
    assert_eq!(p4_then.metadata.labels.as_ref().unwrap()["v"], "old");
    assert_eq!(
        rest.metadata.resource_version,
        first.metadata.resource_version
    );
    let fresh = pods.list(&ListParams::default()).await.unwrap();
    assert_eq!(
        names(&fresh),
        ["p0", "p1", "p2", "p3", "p3a", "p4", "p6", "p7"]
    );
}
