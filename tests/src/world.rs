//! The getting-started cluster in a simulated world, and typed reads of its state. A world runs
//! on the in-process API server or on a real control plane ([`On`]): the end-to-end suite's
//! matrix.

use std::path::PathBuf;

use k8s_openapi::api::core::v1::{Node, Pod};
use kerf_api::v1::NodeClaim;
use kerf_sim::world::{World, WorldError, WorldOptions};
use kube::Client;
use kube::api::{Api, ListParams};

use crate::real::cluster::ControlPlane;

/// The repository root.
pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// A file of the repository, read.
pub fn read(rel: &str) -> String {
    std::fs::read_to_string(repo().join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

/// Which API server a test's world runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum On {
    /// Kerf's in-process server and simulated components, in simulated time.
    InProcess,
    /// A real control plane of its own (`scripts/cluster.sh up`, stopped when the test ends),
    /// in wall-clock time.
    Real,
}

/// A world and, on a real control plane, the guard that stops it once the world is gone.
#[derive(Debug)]
pub struct TestWorld {
    world: World,
    plane: Option<ControlPlane>,
}

impl std::ops::Deref for TestWorld {
    type Target = World;
    fn deref(&self) -> &World {
        &self.world
    }
}

impl std::ops::DerefMut for TestWorld {
    fn deref_mut(&mut self) -> &mut World {
        &mut self.world
    }
}

impl From<World> for TestWorld {
    /// A world on the in-process server.
    fn from(world: World) -> Self {
        TestWorld { world, plane: None }
    }
}

impl TestWorld {
    /// The world of an in-process run (a real control plane's world cannot outlive the
    /// guard that stops it).
    pub fn into_world(self) -> World {
        assert!(
            self.plane.is_none(),
            "a world on a real control plane stays in its TestWorld"
        );
        self.world
    }
}

/// A world with `options` on `on`.
pub async fn start_on(on: On, mut options: WorldOptions) -> TestWorld {
    let plane = match on {
        On::InProcess => None,
        On::Real => {
            // Worlds of one test may run side by side: each control plane is named apart.
            static STARTED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
            let n = STARTED.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            let cp = ControlPlane::up(&format!("e2e{n}")).await;
            options.cluster = Some(cp.admin_kubeconfig());
            Some(cp)
        }
    };
    let world = World::start(options)
        .await
        .unwrap_or_else(|e| panic!("world on {on:?}: {e}"));
    TestWorld { world, plane }
}

/// [`getting_started_with`] on `on`.
pub async fn getting_started_on(on: On, options: WorldOptions) -> TestWorld {
    let w = start_on(on, options).await;
    w.apply(&read("examples/getting-started/nodepool.yaml"))
        .await
        .unwrap_or_else(|e| panic!("the getting-started NodePool on {on:?}: {e}"));
    w
}

/// A world with the getting-started NodePool and EC2NodeClass applied.
pub async fn getting_started() -> Result<World, WorldError> {
    getting_started_with(WorldOptions::default()).await
}

/// [`getting_started`] with other options.
pub async fn getting_started_with(options: WorldOptions) -> Result<World, WorldError> {
    let w = World::start(options).await?;
    w.apply(&read("examples/getting-started/nodepool.yaml"))
        .await?;
    Ok(w)
}

/// The getting-started cluster after `inflate` ran 5 pods on one node and was scaled to none:
/// the node is empty (its pods gone), and no disruption has had time to act.
pub async fn one_empty_node(options: WorldOptions) -> World {
    let mut w = getting_started_with(options).await.unwrap();
    w.apply(&inflate(5)).await.unwrap();
    let ran = w.run_until(jiff::SignedDuration::from_mins(3), |c| all_running(c, 5));
    assert!(ran.await.unwrap(), "5 inflate pods never ran");
    w.apply(&inflate(0)).await.unwrap();
    let gone = w.run_until(jiff::SignedDuration::from_secs(20), |c| async move {
        pods(&c).await.is_empty()
    });
    assert!(gone.await.unwrap(), "the inflate pods are not gone");
    w
}

/// Options for long simulated runs: 5-second ticks.
pub fn coarse() -> WorldOptions {
    WorldOptions {
        tick: jiff::SignedDuration::from_secs(5),
        ..WorldOptions::default()
    }
}

/// Lets the provisioning batch end: the hints queued so far are older than the batch's idle
/// time when the provisioner reads them (as the queue's batching window makes them), so the
/// pass runs instead of carrying the batch on.
pub fn batch_ends(w: &World) {
    // From the reading, not the last move: on a real control plane the clock follows the wall.
    w.clock
        .advance_to(w.now() + kerf_control::provision::batch::BATCH_IDLE);
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

/// Ticks until the NodeClaim `name` is gone and `want` pods run, for at most `max`; whether
/// that happened.
pub async fn replaced(
    w: &mut World,
    name: &str,
    want: usize,
    max: jiff::SignedDuration,
) -> Result<bool, WorldError> {
    w.run_until(max, |c| async move {
        let gone = !claims(&c)
            .await
            .iter()
            .any(|x| x.metadata.name.as_deref() == Some(name));
        gone && all_running(c, want).await
    })
    .await
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

/// What must hold once the system is quiet: every live instance belongs to exactly one
/// NodeClaim and every launched NodeClaim to a live instance; no NodeClaim launched twice
/// ([`kerf_sim::scenario::invariants::check_settled`]). Returns the violations.
pub async fn violations(w: &World) -> Vec<String> {
    kerf_sim::scenario::invariants::check_settled(w)
        .await
        .unwrap_or_else(|e| vec![e.to_string()])
}

/// Pods that are not Running.
pub async fn not_running(c: &Client) -> Vec<String> {
    pods(c)
        .await
        .iter()
        .filter(|p| phase(p) != "Running")
        .map(|p| {
            format!(
                "{}={}",
                p.metadata.name.clone().unwrap_or_default(),
                phase(p)
            )
        })
        .collect()
}

/// When each log line whose message starts with `prefix` was written, oldest first.
pub fn logged_at(w: &World, prefix: &str) -> Vec<jiff::Timestamp> {
    w.logs
        .entries()
        .iter()
        .filter(|e| e["message"].as_str().is_some_and(|m| m.starts_with(prefix)))
        .filter_map(|e| e["time"].as_str()?.parse().ok())
        .collect()
}
