//! Finalizers, status subresource, generation, eviction with PDBs, watches and CRD schema
//! validation through a real kube::Client.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers outside #[test] fns

mod common;

use common::*;
use futures::{StreamExt, TryStreamExt};
use k8s_openapi::api::core::v1::{Node, Pod};
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use kerf_api::v1::{NodeClaim, NodePool};
use kerf_sim::{Sim, SimOptions};
use kube::api::{
    Api, DeleteParams, EvictParams, Patch, PatchParams, PostParams, WatchEvent, WatchParams,
};
use serde_json::json;
use std::time::Duration;

#[tokio::test]
async fn finalizers_hold_deletion_until_removed() {
    let (_sim, client) = start().await;
    let nodes: Api<Node> = Api::all(client);
    let mut n = node("n1", json!({}));
    n.metadata.finalizers = Some(vec!["karpenter.sh/termination".into()]);
    nodes.create(&PostParams::default(), &n).await.unwrap();
    let first = nodes.delete("n1", &DeleteParams::default()).await.unwrap();
    let terminating = first.left().unwrap();
    assert!(terminating.metadata.deletion_timestamp.is_some());
    let again = nodes
        .delete("n1", &DeleteParams::default())
        .await
        .unwrap()
        .left()
        .unwrap();
    assert_eq!(
        again.metadata.resource_version,
        terminating.metadata.resource_version
    );

    let add = json!({"metadata": {"finalizers": ["karpenter.sh/termination", "other"]}});
    let e = status(
        nodes
            .patch("n1", &PatchParams::default(), &Patch::Merge(add))
            .await
            .unwrap_err(),
    );
    assert_eq!((e.code, e.reason.as_str()), (422, "Invalid"));

    let clear = json!({"metadata": {"finalizers": null}});
    nodes
        .patch("n1", &PatchParams::default(), &Patch::Merge(clear))
        .await
        .unwrap();
    assert!(nodes.get_opt("n1").await.unwrap().is_none());
}

#[tokio::test]
async fn status_subresource_and_generation_on_custom_resources() {
    let (_sim, client) = start().await;
    let pools = dynamic::<NodePool>(&client);
    let mut doc = nodepool("p1");
    doc["status"] = json!({"nodes": 5});
    let created = create_dynamic(&pools, doc).await.unwrap();
    assert!(
        created.data.get("status").is_none(),
        "status is dropped on create"
    );
    assert_eq!(created.metadata.generation, Some(1));

    let pp = PatchParams::default();
    let main = json!({"metadata": {"labels": {"x": "y"}}, "status": {"nodes": 3}});
    let after_meta = pools.patch("p1", &pp, &Patch::Merge(main)).await.unwrap();
    assert!(
        after_meta.data.get("status").is_none(),
        "main resource ignores status"
    );
    assert_eq!(
        after_meta.metadata.generation,
        Some(1),
        "metadata does not bump generation"
    );

    let st = json!({"spec": {"weight": 7}, "status": {"nodes": 3}});
    let after_status = pools
        .patch_status("p1", &pp, &Patch::Merge(st))
        .await
        .unwrap();
    assert_eq!(after_status.data["status"]["nodes"], 3);
    assert!(
        after_status.data["spec"].get("weight").is_none(),
        "/status ignores spec"
    );

    let spec = json!({"spec": {"weight": 7}});
    let bumped = pools.patch("p1", &pp, &Patch::Merge(spec)).await.unwrap();
    assert_eq!(bumped.metadata.generation, Some(2));
    assert_eq!(
        bumped.data["status"]["nodes"], 3,
        "status kept across a spec write"
    );

    let typed: Api<NodePool> = Api::all(client.clone());
    let mut np = typed.get("p1").await.unwrap();
    np.metadata.resource_version = None;
    let e = status(
        typed
            .replace("p1", &PostParams::default(), &np)
            .await
            .unwrap_err(),
    );
    assert_eq!((e.code, e.reason.as_str()), (422, "Invalid"));
    let claims: Api<NodeClaim> = Api::all(client);
    let e = status(claims.get_status("missing").await.unwrap_err());
    assert_eq!(e.message, "nodeclaims.karpenter.sh \"missing\" not found");
    assert_eq!(e.details.unwrap().group, "karpenter.sh");
}

#[tokio::test]
async fn invalid_nodepool_is_rejected_with_field_causes() {
    let (_sim, client) = start().await;
    let pools = dynamic::<NodePool>(&client);
    let mut doc = nodepool("bad");
    doc["spec"]["weight"] = json!(500);
    doc["spec"]["template"]["spec"]["requirements"][0]["operator"] = json!("Sometimes");
    doc["spec"]["template"]["spec"]["nodeClassRef"] =
        json!({"group": "karpenter.k8s.aws", "kind": "EC2NodeClass"});
    let e = status(create_dynamic(&pools, doc).await.unwrap_err());
    assert_eq!(
        (e.code, e.reason.as_str(), e.status),
        (
            422,
            "Invalid",
            Some(kube::core::response::StatusSummary::Failure)
        )
    );
    assert!(
        e.message
            .starts_with("NodePool.karpenter.sh \"bad\" is invalid: ["),
        "{}",
        e.message
    );
    let d = e.details.unwrap();
    assert_eq!(
        (d.name.as_str(), d.group.as_str(), d.kind.as_str()),
        ("bad", "karpenter.sh", "NodePool")
    );
    let by_field = |f: &str| {
        d.causes
            .iter()
            .find(|c| c.field == f)
            .unwrap_or_else(|| panic!("{f}: {:?}", d.causes))
    };
    assert_eq!(by_field("spec.weight").reason, "FieldValueInvalid");
    assert_eq!(
        by_field("spec.weight").message,
        "Invalid value: 500: spec.weight in body should be less than or equal to 100"
    );
    assert_eq!(
        by_field("spec.template.spec.requirements[0].operator").reason,
        "FieldValueNotSupported"
    );
    let name = by_field("spec.template.spec.nodeClassRef.name");
    assert_eq!(
        (name.reason.as_str(), name.message.as_str()),
        ("FieldValueRequired", "Required value")
    );

    let ok = create_dynamic(&pools, nodepool("good")).await.unwrap();
    assert!(
        ok.data["spec"]["disruption"].is_object(),
        "schema defaults applied: {}",
        ok.data
    );
}

fn pdb(min_available: i32) -> PodDisruptionBudget {
    serde_json::from_value(json!({"metadata": {"name": "web-pdb"},
        "spec": {"minAvailable": min_available, "selector": {"matchLabels": {"app": "web"}}}}))
    .unwrap()
}

#[tokio::test]
async fn eviction_respects_pod_disruption_budgets() {
    let (sim, client) = start().await;
    for name in ["w1", "w2"] {
        seed_running_pod(&sim, "default", name, json!({"app": "web"}));
    }
    let pdbs: Api<PodDisruptionBudget> = Api::namespaced(client.clone(), "default");
    pdbs.create(&PostParams::default(), &pdb(1)).await.unwrap();
    let pods: Api<Pod> = Api::namespaced(client.clone(), "default");
    let ok = pods.evict("w1", &EvictParams::default()).await.unwrap();
    assert_eq!(ok.code, 201);
    assert!(pods.get_opt("w1").await.unwrap().is_none());

    let e = status(pods.evict("w2", &EvictParams::default()).await.unwrap_err());
    assert_eq!((e.code, e.reason.as_str()), (429, "TooManyRequests"));
    assert_eq!(
        e.message,
        "Cannot evict pod as it would violate the pod's disruption budget."
    );
    let cause = &e.details.unwrap().causes[0];
    assert_eq!(cause.reason, "DisruptionBudget");
    assert_eq!(
        cause.message,
        "The disruption budget web-pdb needs 1 healthy pods and has 1 currently"
    );
    let evictions = sim
        .requests()
        .iter()
        .filter(|r| r.uri.contains("/w2/eviction"))
        .count();
    assert_eq!(evictions, 1, "no client-side retries");
    assert!(pods.get_opt("w2").await.unwrap().is_some());

    let e = status(
        pods.evict("ghost", &EvictParams::default())
            .await
            .unwrap_err(),
    );
    assert_eq!(e.code, 404);
}

#[tokio::test]
async fn watch_streams_changes_and_bookmarks() {
    let opts = SimOptions {
        bookmark_interval: Duration::from_millis(100),
        ..SimOptions::default()
    };
    let sim = Sim::builder().options(opts).start().await.unwrap();
    let client = sim.client().unwrap();
    let nodes: Api<Node> = Api::all(client);
    nodes
        .create(&PostParams::default(), &node("n1", json!({"pool": "a"})))
        .await
        .unwrap();
    let list = nodes.list(&Default::default()).await.unwrap();
    let rv = list.metadata.resource_version.unwrap();
    let wp = WatchParams::default().labels("pool=a").timeout(5);
    let mut stream = nodes.watch(&wp, &rv).await.unwrap().boxed();
    nodes
        .create(&PostParams::default(), &node("n2", json!({"pool": "a"})))
        .await
        .unwrap();
    let relabel = json!({"metadata": {"labels": {"pool": "b"}}});
    nodes
        .patch("n1", &PatchParams::default(), &Patch::Merge(relabel))
        .await
        .unwrap();
    let mut seen = Vec::new();
    while let Some(ev) = stream.try_next().await.unwrap() {
        let label = match ev {
            WatchEvent::Added(n) => format!("ADDED {}", n.metadata.name.unwrap()),
            WatchEvent::Modified(n) => format!("MODIFIED {}", n.metadata.name.unwrap()),
            WatchEvent::Deleted(n) => format!("DELETED {}", n.metadata.name.unwrap()),
            WatchEvent::Bookmark(b) => {
                format!("BOOKMARK {}", b.metadata.resource_version.is_empty())
            }
            WatchEvent::Error(e) => panic!("{e:?}"),
        };
        let done = label.starts_with("BOOKMARK");
        seen.push(label);
        if done {
            break;
        }
    }
    assert_eq!(seen, ["ADDED n2", "DELETED n1", "BOOKMARK false"]);

    sim.compact();
    let mut expired = nodes
        .watch(&WatchParams::default(), &rv)
        .await
        .unwrap()
        .boxed();
    match expired.try_next().await.unwrap() {
        Some(WatchEvent::Error(e)) => assert_eq!(e.code, 410),
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn cel_rules_karpenter_relies_on() {
    let (_sim, client) = start().await;
    let claims = dynamic::<NodeClaim>(&client);
    let nc = json!({"apiVersion": "karpenter.sh/v1", "kind": "NodeClaim", "metadata": {"name": "c1"},
        "spec": {"requirements": [{"key": "node.kubernetes.io/instance-type", "operator": "In", "values": ["m5.large"]}],
            "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"}}});
    create_dynamic(&claims, nc).await.unwrap();
    let change = json!({"spec": {"expireAfter": "1h"}});
    let e = status(
        claims
            .patch("c1", &PatchParams::default(), &Patch::Merge(change))
            .await
            .unwrap_err(),
    );
    assert_eq!((e.code, e.reason.as_str()), (422, "Invalid"));
    let cause = &e.details.unwrap().causes[0];
    assert_eq!(
        (cause.field.as_str(), cause.message.as_str()),
        ("spec", "Invalid value: \"object\": spec is immutable")
    );
    let labels = json!({"metadata": {"labels": {"a": "b"}}});
    claims
        .patch("c1", &PatchParams::default(), &Patch::Merge(labels))
        .await
        .unwrap();

    let empty_in = json!({"apiVersion": "karpenter.sh/v1", "kind": "NodeClaim", "metadata": {"name": "c2"},
        "spec": {"requirements": [{"key": "kubernetes.io/arch", "operator": "In", "values": []}],
            "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"}}});
    let e = status(create_dynamic(&claims, empty_in).await.unwrap_err());
    assert_eq!(e.code, 422, "{}", e.message);
}

#[tokio::test]
async fn deployments_scale_through_the_scale_subresource_as_kubectl_scale_does() {
    use k8s_openapi::api::apps::v1::Deployment;
    let (_sim, client) = start().await;
    let api: Api<Deployment> = Api::namespaced(client.clone(), "default");
    let d: Deployment =
        serde_json::from_value(json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "inflate"},
        "spec": {"replicas": 5, "selector": {"matchLabels": {"app": "inflate"}},
            "template": {"metadata": {"labels": {"app": "inflate"}},
                "spec": {"containers": [{"name": "c", "image": "pause"}]}}}}))
        .unwrap();
    api.create(&PostParams::default(), &d).await.unwrap();
    let s = api.get_scale("inflate").await.unwrap();
    assert_eq!(s.spec.and_then(|s| s.replicas), Some(5));
    assert_eq!(
        s.status.map(|s| s.selector.unwrap_or_default()),
        Some("app=inflate".into())
    );
    // `kubectl scale deployment inflate --replicas 12` sends this merge patch.
    let patch = json!({"spec": {"replicas": 12}});
    let s = api
        .patch_scale("inflate", &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .unwrap();
    assert_eq!(s.spec.and_then(|s| s.replicas), Some(12));
    let d = api.get("inflate").await.unwrap();
    assert_eq!(d.spec.replicas, Some(12));
    let bad = json!({"spec": {"replicas": -1}});
    let e = api
        .patch_scale("inflate", &PatchParams::default(), &Patch::Merge(&bad))
        .await
        .unwrap_err();
    assert_eq!(status(e).code, 400);
    let pods: Api<Pod> = Api::namespaced(client, "default");
    assert!(pods.get_scale("p").await.is_err(), "pods have no scale");
}

#[tokio::test]
async fn kubectl_get_gets_a_table_with_karpenters_printer_columns() {
    let (_sim, client) = start().await;
    create_dynamic(&dynamic::<NodePool>(&client), nodepool("default"))
        .await
        .unwrap();
    let get = table_get;
    let t: serde_json::Value = client
        .request(get("/apis/karpenter.sh/v1/nodepools"))
        .await
        .unwrap();
    assert_eq!(t["kind"], "Table");
    let names: Vec<&str> = t["columnDefinitions"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|c| c["name"].as_str())
        .collect();
    for want in ["Name", "NodeClass", "Nodes", "Ready", "Age"] {
        assert!(names.contains(&want), "{want} missing from {names:?}");
    }
    let row = &t["rows"][0];
    assert_eq!(row["cells"][0], "default");
    let at = |col: &str| row["cells"][names.iter().position(|n| *n == col).unwrap()].clone();
    assert_eq!(at("NodeClass"), "default");
    assert!(at("Age").as_str().unwrap().ends_with('s'), "{}", at("Age"));
    assert_eq!(row["object"]["metadata"]["name"], "default");
    // One object; built-in kinds get kube-apiserver's columns (wide ones at priority 1).
    let one: serde_json::Value = client
        .request(get("/apis/karpenter.sh/v1/nodepools/default"))
        .await
        .unwrap();
    assert_eq!(one["rows"].as_array().map(Vec::len), Some(1));
    let pods: serde_json::Value = client.request(get("/api/v1/pods")).await.unwrap();
    assert_eq!(pods["kind"], "Table");
    let columns: Vec<(&str, i64)> = pods["columnDefinitions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["name"].as_str().unwrap(), c["priority"].as_i64().unwrap()))
        .collect();
    assert_eq!(
        columns[..6],
        [
            ("Name", 0),
            ("Ready", 0),
            ("Status", 0),
            ("Restarts", 0),
            ("Age", 0),
            ("IP", 1)
        ]
    );
}

#[tokio::test]
async fn a_taken_port_is_refused_naming_it() {
    let taken = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = taken.local_addr().unwrap().port();
    let err = Sim::builder().port(port).start().await.unwrap_err();
    assert!(
        err.to_string()
            .starts_with(&format!("cannot listen on 127.0.0.1:{port}: ")),
        "{err}"
    );
    let free = Sim::builder().port(0).start().await.unwrap();
    assert!(free.url().starts_with("http://127.0.0.1:"));
}

/// As kube-apiserver's registries with `ReturnDeletedObject`: deleting a CSINode or a
/// StorageClass answers with the object, deleting a Node with a Success Status.
#[tokio::test]
async fn deletes_answer_with_the_object_where_kube_apiserver_does() {
    use k8s_openapi::api::storage::v1::{CSINode, StorageClass};
    let (_sim, client) = start().await;
    let csinodes: Api<CSINode> = Api::all(client.clone());
    let c: CSINode =
        serde_json::from_value(json!({"metadata": {"name": "n1"}, "spec": {"drivers": []}}))
            .unwrap();
    csinodes.create(&PostParams::default(), &c).await.unwrap();
    let gone = csinodes
        .delete("n1", &DeleteParams::default())
        .await
        .unwrap();
    assert_eq!(gone.left().unwrap().metadata.name.as_deref(), Some("n1"));

    let classes: Api<StorageClass> = Api::all(client.clone());
    let sc: StorageClass = serde_json::from_value(
        json!({"metadata": {"name": "gp3"}, "provisioner": "ebs.csi.aws.com"}),
    )
    .unwrap();
    classes.create(&PostParams::default(), &sc).await.unwrap();
    let gone = classes
        .delete("gp3", &DeleteParams::default())
        .await
        .unwrap();
    assert_eq!(gone.left().unwrap().provisioner, "ebs.csi.aws.com");

    let nodes: Api<Node> = Api::all(client);
    nodes
        .create(&PostParams::default(), &node("n2", json!({})))
        .await
        .unwrap();
    let gone = nodes.delete("n2", &DeleteParams::default()).await.unwrap();
    assert!(gone.right().is_some(), "a Node's delete answers a Status");
}
