//! The Cluster port on a real kube::Client against the in-process API server.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers outside #[test] fns

mod common;

use common::*;
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use kerf_api::v1::NodeClaim;
use kerf_kube::{Cluster, ClusterError, Deleted, Target};
use kube::api::{Api, PostParams};
use serde_json::json;

#[tokio::test]
async fn snapshot_reads_every_collection() {
    let (sim, client) = start().await;
    let kc = cluster(&client);
    create_pool(&client, "default").await;
    create_class(&client).await;
    kc.create_node_claim(
        &Api::<kerf_api::v1::NodePool>::all(client.clone())
            .get("default")
            .await
            .unwrap(),
        claim(),
    )
    .await
    .unwrap();
    for i in 0..3 {
        seed_node(&sim, &format!("n{i}"));
    }
    for i in 0..1_200 {
        seed_pod(
            &sim,
            "default",
            &format!("p{i:04}"),
            "n0",
            json!({"app": "web"}),
            "Running",
        );
    }
    seed_pod(&sim, "default", "done", "n0", json!({}), "Succeeded");
    sim.seed(json!({"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "ds", "namespace": "kube-system"},
        "spec": {"selector": {"matchLabels": {"a": "b"}}, "template": {"metadata": {"labels": {"a": "b"}}, "spec": {"containers": [{"name": "c", "image": "x"}]}}}}))
        .unwrap();
    Api::<PodDisruptionBudget>::namespaced(client.clone(), "default")
        .create(
            &PostParams::default(),
            &serde_json::from_value(json!({"metadata": {"name": "pdb"},
            "spec": {"maxUnavailable": 1, "selector": {"matchLabels": {"app": "web"}}}}))
            .unwrap(),
        )
        .await
        .unwrap();
    sim.seed(json!({"apiVersion": "v1", "kind": "Namespace",
        "metadata": {"name": "team-a", "labels": {"team": "a"}}}))
        .unwrap();
    let before = sim.requests().len();
    let snap = kc.snapshot().await.unwrap();
    let requests = sim.requests().len() - before;
    assert_eq!(snap.pods.len(), 1_200, "terminal pods are skipped");
    assert_eq!(
        (
            snap.nodes.len(),
            snap.node_claims.len(),
            snap.node_pools.len()
        ),
        (3, 1, 1)
    );
    assert_eq!(
        (
            snap.node_classes.len(),
            snap.daemon_sets.len(),
            snap.pdbs.len()
        ),
        (1, 1, 1)
    );
    assert!(
        snap.namespaces
            .iter()
            .any(|n| n.metadata.name.as_deref() == Some("team-a")),
        "namespaces are read for namespaceSelectors"
    );
    assert_eq!(
        requests,
        3 + 12,
        "pods take 3 pages of 500, the other twelve collections one page each"
    );
    assert!(snap.resource_versions.values().all(|rv| !rv.is_empty()));
    // The storage collections are read too (none of their objects exist here), each at a
    // version of its own.
    assert!(snap.persistent_volume_claims.is_empty() && snap.csi_nodes.is_empty());
    for kind in [
        "persistentvolumeclaims",
        "persistentvolumes",
        "storageclasses",
        "csinodes",
    ] {
        assert!(snap.resource_versions.contains_key(kind), "{kind} is read");
    }
    // NodeOverlays are listed too (their CRD is one of Kerf's).
    assert!(snap.node_overlays.is_empty());
    assert!(snap.resource_versions.contains_key("nodeoverlays"));
}

#[tokio::test]
async fn a_server_without_the_nodeoverlay_crd_has_no_overlays() {
    let (sim, client) = start().await;
    let kc = cluster(&client);
    create_pool(&client, "default").await;
    // As a cluster where Karpenter's chart never installed it: the path is not served.
    sim.inject(kerf_sim::Fault {
        method: "GET".into(),
        path_contains: "/nodeoverlays".into(),
        times: 1,
        error: kerf_sim::ApiError::no_route(),
    });
    let snap = kc.snapshot().await.unwrap();
    assert!(snap.node_overlays.is_empty());
    assert!(!snap.resource_versions.contains_key("nodeoverlays"));
    assert_eq!(snap.node_pools.len(), 1, "the rest is read");
}

#[tokio::test]
async fn node_claims_are_created_owned_and_finalized() {
    let (_sim, client) = start().await;
    let kc = cluster(&client);
    let pool = create_pool(&client, "general").await;
    let nc = kc.create_node_claim(&pool, claim()).await.unwrap();
    let m = &nc.metadata;
    assert!(m.name.as_ref().unwrap().starts_with("general-"));
    assert_eq!(
        m.finalizers,
        Some(vec!["karpenter.sh/termination".to_string()])
    );
    assert_eq!(
        m.labels.as_ref().unwrap()["karpenter.sh/nodepool"],
        "general"
    );
    let owner = &m.owner_references.as_ref().unwrap()[0];
    assert_eq!(
        (
            owner.kind.as_str(),
            owner.name.as_str(),
            owner.block_owner_deletion
        ),
        ("NodePool", "general", Some(true))
    );
    assert_eq!(owner.uid, pool.metadata.uid.clone().unwrap());

    let mut named = claim();
    named.metadata.name = Some("fixed".into());
    let a = kc.create_node_claim(&pool, named.clone()).await.unwrap();
    let b = kc.create_node_claim(&pool, named).await.unwrap();
    assert_eq!(
        a.metadata.uid, b.metadata.uid,
        "create with a name is idempotent"
    );
}

fn condition(type_: &str, status: &str, reason: &str) -> kerf_api::v1::Condition {
    serde_json::from_value(
        json!({"type": type_, "status": status, "reason": reason, "message": "",
        "lastTransitionTime": ""}),
    )
    .unwrap()
}

#[tokio::test]
async fn status_and_conditions_are_patched_conditionally() {
    let (_sim, client) = start().await;
    let kc = cluster(&client);
    let pool = create_pool(&client, "default").await;
    let nc = kc.create_node_claim(&pool, claim()).await.unwrap();
    let name = nc.metadata.name.clone().unwrap();
    let rv = nc.metadata.resource_version.clone().unwrap();
    let status: kerf_api::v1::NodeClaimStatus =
        serde_json::from_value(json!({"providerID": "aws:///us-east-1a/i-1", "imageID": "ami-1"}))
            .unwrap();
    let updated = kc
        .patch_node_claim_status(&name, Some(&rv), &status)
        .await
        .unwrap();
    assert_eq!(
        updated.status.as_ref().unwrap().provider_id.as_deref(),
        Some("aws:///us-east-1a/i-1")
    );
    let stale = kc
        .patch_node_claim_status(&name, Some(&rv), &status)
        .await
        .unwrap_err();
    assert!(stale.is_conflict() && stale.is_retryable(), "{stale:?}");

    let c1 = kc
        .set_node_claim_conditions(
            &name,
            &[condition("Launched", "True", "Launched")],
            jiff::Timestamp::now(),
        )
        .await
        .unwrap();
    let t1 = c1.status.as_ref().unwrap().conditions[0]
        .last_transition_time
        .clone();
    assert!(!t1.is_empty());
    let c2 = kc
        .set_node_claim_conditions(
            &name,
            &[
                condition("Launched", "True", "Again"),
                condition("Registered", "False", "NodeNotFound"),
            ],
            jiff::Timestamp::now(),
        )
        .await
        .unwrap();
    let conds = &c2.status.as_ref().unwrap().conditions;
    assert_eq!(conds.len(), 2);
    assert_eq!(
        (
            conds[0].reason.as_str(),
            conds[0].last_transition_time.as_str()
        ),
        ("Again", t1.as_str())
    );
    assert_eq!(
        c2.status.unwrap().provider_id.as_deref(),
        Some("aws:///us-east-1a/i-1"),
        "other status kept"
    );
}

#[tokio::test]
async fn node_claim_deletion_waits_for_its_finalizer() {
    let (_sim, client) = start().await;
    let kc = cluster(&client);
    let pool = create_pool(&client, "default").await;
    let nc = kc.create_node_claim(&pool, claim()).await.unwrap();
    let name = nc.metadata.name.clone().unwrap();
    let wrong_uid = kc
        .delete_node_claim(&name, Some("not-the-uid"))
        .await
        .unwrap_err();
    assert!(wrong_uid.is_conflict());
    assert_eq!(
        kc.delete_node_claim(&name, nc.metadata.uid.as_deref())
            .await
            .unwrap(),
        Deleted::Terminating
    );
    let target = Target::NodeClaim(name.clone());
    kc.remove_finalizer(&target, "karpenter.sh/termination", None)
        .await
        .unwrap();
    assert!(
        Api::<NodeClaim>::all(client.clone())
            .get_opt(&name)
            .await
            .unwrap()
            .is_none()
    );
}

#[tokio::test]
async fn a_failed_nodeclaim_create_is_never_repeated() {
    let (sim, client) = start().await;
    let kc = cluster(&client);
    let pool = create_pool(&client, "default").await;
    sim.inject(kerf_sim::Fault {
        method: "POST".into(),
        path_contains: "/nodeclaims".into(),
        times: 1,
        error: kerf_sim::ApiError::new(504, "Timeout", "the request timed out".into(), None),
    });
    // A timed-out create may have happened: repeating it could make a second NodeClaim.
    let e = kc.create_node_claim(&pool, claim()).await.unwrap_err();
    assert!(matches!(e, ClusterError::Transient(_)), "{e:?}");
    let creates = sim
        .requests()
        .iter()
        .filter(|r| r.method == "POST" && r.uri.contains("/nodeclaims"))
        .count();
    assert_eq!(creates, 1);
    assert!(kc.node_claims().await.unwrap().is_empty());
}

#[tokio::test]
async fn a_list_whose_continue_token_expired_starts_over_once() {
    let (sim, client) = start().await;
    for i in 0..10 {
        seed_node(&sim, &format!("n{i}"));
    }
    // Ten pages of one Node, 200 ms each: the history is compacted while they are read.
    sim.set_latency(std::time::Duration::from_millis(200));
    let api = Api::<k8s_openapi::api::core::v1::Node>::all(client.clone());
    let lp = kube::api::ListParams::default().limit(1);
    let list = tokio::spawn(async move { kerf_kube::snapshot::list_all(api, &lp).await });
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    sim.compact();
    let (nodes, _) = list.await.unwrap().unwrap();
    assert_eq!(nodes.len(), 10, "every Node, once");
    let served = sim.requests();
    let expired = served.iter().filter(|r| r.status == 410).count();
    assert_eq!(expired, 1, "one page expired, and the list started over");
    assert!(
        served.len() > 11,
        "the list was read again from its first page"
    );
}
