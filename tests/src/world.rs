//! The getting-started cluster in a simulated world, and typed reads of its state.

use std::path::PathBuf;

use k8s_openapi::api::core::v1::{Node, Pod};
use kerf_api::v1::NodeClaim;
use kerf_sim::world::{World, WorldError, WorldOptions};
use kube::Client;
use kube::api::{Api, ListParams};

/// The repository root.
pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// A file of the repository, read.
pub fn read(rel: &str) -> String {
    std::fs::read_to_string(repo().join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

/// A world with the getting-started NodePool and EC2NodeClass applied.
pub async fn getting_started() -> Result<World, WorldError> {
    let w = World::start(WorldOptions::default()).await?;
    w.apply(&read("examples/getting-started/nodepool.yaml"))
        .await?;
    Ok(w)
}

/// The `inflate` Deployment with `replicas`.
pub fn inflate(replicas: u32) -> String {
    read("examples/getting-started/inflate.yaml")
        .replace("replicas: 5", &format!("replicas: {replicas}"))
}

pub async fn pods(c: &Client) -> Vec<Pod> {
    Api::<Pod>::all(c.clone())
        .list(&ListParams::default())
        .await
        .map(|l| l.items)
        .unwrap_or_default()
}

pub async fn nodes(c: &Client) -> Vec<Node> {
    Api::<Node>::all(c.clone())
        .list(&ListParams::default())
        .await
        .map(|l| l.items)
        .unwrap_or_default()
}

pub async fn claims(c: &Client) -> Vec<NodeClaim> {
    Api::<NodeClaim>::all(c.clone())
        .list(&ListParams::default())
        .await
        .map(|l| l.items)
        .unwrap_or_default()
}

/// Whether every pod runs.
pub async fn all_running(c: Client, want: usize) -> bool {
    let p = pods(&c).await;
    p.len() == want
        && p.iter()
            .all(|p| p.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Running"))
}

/// The phase of a pod.
pub fn phase(p: &Pod) -> &str {
    p.status
        .as_ref()
        .and_then(|s| s.phase.as_deref())
        .unwrap_or_default()
}

/// Whether a claim's condition is True.
pub fn condition(c: &NodeClaim, t: &str) -> bool {
    kerf_control::claim::is_true(c, t)
}
