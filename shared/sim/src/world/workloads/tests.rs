//! The Deployment controller's ReplicaSets, as `kubectl get rs` shows them.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use k8s_openapi::api::apps::v1::ReplicaSet;
use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, ListParams};

use crate::world::{World, WorldOptions};

fn deployment(image: &str, replicas: u32) -> String {
    format!(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: web, namespace: default}}\n\
         spec:\n  replicas: {replicas}\n  selector: {{matchLabels: {{app: web}}}}\n  template:\n    \
         metadata: {{labels: {{app: web}}}}\n    spec: {{containers: [{{name: c, image: {image}}}]}}\n"
    )
}

async fn sets(w: &World) -> Vec<ReplicaSet> {
    let api: Api<ReplicaSet> = Api::namespaced(w.client.clone(), "default");
    api.list(&ListParams::default()).await.unwrap().items
}

async fn live_pods(w: &World) -> Vec<Pod> {
    let api: Api<Pod> = Api::namespaced(w.client.clone(), "default");
    let mut pods = api.list(&ListParams::default()).await.unwrap().items;
    pods.retain(|p| p.metadata.deletion_timestamp.is_none());
    pods
}

fn replicas(rs: &ReplicaSet) -> (i32, i32) {
    let status = rs.status.clone().unwrap_or_default().replicas;
    (rs.spec.replicas.unwrap_or(-1), status)
}

#[tokio::test]
async fn a_deployment_owns_a_replicaset_per_template_and_the_replicaset_owns_the_pods() {
    let mut w = World::start(WorldOptions::default()).await.unwrap();
    w.apply(&deployment("pause", 3)).await.unwrap();
    w.tick().await.unwrap();
    w.tick().await.unwrap();

    let first = sets(&w).await;
    assert_eq!(first.len(), 1, "one ReplicaSet");
    let rs = &first[0];
    let name = rs.metadata.name.clone().unwrap();
    let hash = rs.metadata.labels.as_ref().unwrap()["pod-template-hash"].clone();
    assert_eq!(name, format!("web-{hash}"));
    let owner = &rs.metadata.owner_references.as_ref().unwrap()[0];
    assert_eq!(
        (owner.kind.as_str(), owner.name.as_str()),
        ("Deployment", "web")
    );
    assert_eq!(replicas(rs), (3, 3), "desired and current");
    let rs_uid = rs.metadata.uid.clone().unwrap();
    let pods = live_pods(&w).await;
    assert_eq!(pods.len(), 3);
    for p in &pods {
        let o = &p.metadata.owner_references.as_ref().unwrap()[0];
        assert_eq!(
            (o.kind.as_str(), o.uid.as_str()),
            ("ReplicaSet", rs_uid.as_str())
        );
        assert!(
            p.metadata
                .name
                .as_ref()
                .unwrap()
                .starts_with(&format!("{name}-"))
        );
    }

    // A new template: a new ReplicaSet takes the pods, the old one is kept at 0.
    w.apply(&deployment("nginx", 3)).await.unwrap();
    w.tick().await.unwrap();
    w.tick().await.unwrap();
    let second = sets(&w).await;
    assert_eq!(second.len(), 2, "the old revision is kept");
    let old = second
        .iter()
        .find(|r| r.metadata.name.as_deref() == Some(&name))
        .unwrap();
    assert_eq!(replicas(old), (0, 0));
    let new = second
        .iter()
        .find(|r| r.metadata.name.as_deref() != Some(&name))
        .unwrap();
    assert_eq!(replicas(new), (3, 3));

    // Deleting the Deployment takes its ReplicaSets and pods with it.
    w.delete(None, "Deployment", Some("default"), "web")
        .await
        .unwrap();
    w.tick().await.unwrap();
    w.tick().await.unwrap();
    assert!(sets(&w).await.is_empty(), "ReplicaSets collected");
    assert!(live_pods(&w).await.is_empty(), "pods collected");
}
