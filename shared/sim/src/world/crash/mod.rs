//! Crash injection: wrappers around the Cluster and Cloud ports that let the first `n`
//! external calls through and fail every later one, as if the function died right after
//! its `n`-th call: that call's effect stays, nothing after it happens. Run a reconciler
//! with them, then the system on to quiescence, for every `n` up to the number of calls a
//! clean run makes, and check that nothing was lost or done twice.

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use jiff::Timestamp;
use k8s_openapi::api::core::v1::{Node, PersistentVolumeClaim, Pod, Taint};
use k8s_openapi::api::storage::v1::VolumeAttachment;
use kerf_api::v1::{
    Condition, EC2NodeClass, EC2NodeClassStatus, NodeClaim, NodeClaimStatus, NodePool,
    NodePoolStatus,
};
use kerf_catalog::unavailable::UnavailableOfferings;
use kerf_control::ports::{
    CloudError, Cluster, ClusterError, Deleted, EventSpec, Evicted, LeaseOutcome, LeaseRequest,
    Snapshot, Target,
};

mod cloud;

/// Counts calls and trips after `limit` of them; clones share the count and the names of
/// the calls let through.
#[derive(Clone, Debug)]
pub struct CrashSwitch {
    calls: Arc<AtomicUsize>,
    limit: usize,
    names: Arc<Mutex<Vec<&'static str>>>,
}

impl CrashSwitch {
    /// A switch that lets `limit` calls through (`usize::MAX`: never trips).
    pub fn after(limit: usize) -> Self {
        CrashSwitch {
            calls: Arc::default(),
            limit,
            names: Arc::default(),
        }
    }

    /// Calls let through so far.
    pub fn calls(&self) -> usize {
        self.calls.load(Ordering::SeqCst).min(self.limit)
    }

    /// Whether the crash happened (a call was refused).
    pub fn tripped(&self) -> bool {
        self.calls.load(Ordering::SeqCst) > self.limit
    }

    /// The calls let through, in order, by the port method's name.
    pub fn names(&self) -> Vec<&'static str> {
        self.names.lock().map(|n| n.clone()).unwrap_or_default()
    }

    /// The crash points after which a write (a call that changes the cluster or the cloud)
    /// of each kind happened for the first time: 1-based call counts.
    pub fn first_writes(&self) -> Vec<usize> {
        let mut seen = std::collections::BTreeSet::new();
        self.names()
            .into_iter()
            .enumerate()
            .filter(|(_, n)| !READS.contains(n) && seen.insert(*n))
            .map(|(i, _)| i + 1)
            .collect()
    }

    fn enter(&self, name: &'static str) -> bool {
        let through = self.calls.fetch_add(1, Ordering::SeqCst) < self.limit;
        if through && let Ok(mut n) = self.names.lock() {
            n.push(name);
        }
        through
    }

    async fn run<T, E, F: Future<Output = Result<T, E>>>(
        &self,
        name: &'static str,
        f: F,
        dead: E,
    ) -> Result<T, E> {
        if self.enter(name) { f.await } else { Err(dead) }
    }
}

/// The port methods that only read.
const READS: [&str; 13] = [
    "snapshot",
    "node_claims",
    "node_claim",
    "node",
    "pods_on_node",
    "volume_attachments",
    "persistent_volume_claim",
    "unavailable_offerings",
    "catalog",
    "node_class_status",
    "describe",
    "list",
    "unhealthy",
];

fn gone() -> ClusterError {
    ClusterError::Transient("crashed".into())
}

fn gone_cloud() -> CloudError {
    CloudError::Transient("crashed".into())
}

/// A Cluster port that crashes.
#[derive(Clone, Debug)]
pub struct CrashCluster<C> {
    pub inner: C,
    pub switch: CrashSwitch,
}

/// A Cloud port that crashes.
#[derive(Clone, Debug)]
pub struct CrashCloud<K> {
    pub inner: K,
    pub switch: CrashSwitch,
}

impl<C: Cluster> Cluster for CrashCluster<C> {
    async fn snapshot(&self) -> Result<Snapshot, ClusterError> {
        self.switch
            .run("snapshot", self.inner.snapshot(), gone())
            .await
    }
    async fn node_claims(&self) -> Result<Vec<NodeClaim>, ClusterError> {
        self.switch
            .run("node_claims", self.inner.node_claims(), gone())
            .await
    }
    async fn node_claim(&self, name: &str) -> Result<Option<NodeClaim>, ClusterError> {
        self.switch
            .run("node_claim", self.inner.node_claim(name), gone())
            .await
    }
    async fn node(&self, name: &str) -> Result<Option<Node>, ClusterError> {
        self.switch.run("node", self.inner.node(name), gone()).await
    }
    async fn pods_on_node(&self, node: &str) -> Result<Vec<Pod>, ClusterError> {
        self.switch
            .run("pods_on_node", self.inner.pods_on_node(node), gone())
            .await
    }
    async fn volume_attachments(&self, node: &str) -> Result<Vec<VolumeAttachment>, ClusterError> {
        let f = self.inner.volume_attachments(node);
        self.switch.run("volume_attachments", f, gone()).await
    }
    async fn persistent_volume_claim(
        &self,
        ns: &str,
        name: &str,
    ) -> Result<Option<PersistentVolumeClaim>, ClusterError> {
        let f = self.inner.persistent_volume_claim(ns, name);
        self.switch.run("persistent_volume_claim", f, gone()).await
    }
    async fn delete_pod(
        &self,
        ns: &str,
        name: &str,
        uid: Option<&str>,
        grace: Option<i64>,
    ) -> Result<Deleted, ClusterError> {
        self.switch
            .run(
                "delete_pod",
                self.inner.delete_pod(ns, name, uid, grace),
                gone(),
            )
            .await
    }
    async fn patch_node_class_status(
        &self,
        name: &str,
        s: &EC2NodeClassStatus,
    ) -> Result<EC2NodeClass, ClusterError> {
        self.switch
            .run(
                "patch_node_class_status",
                self.inner.patch_node_class_status(name, s),
                gone(),
            )
            .await
    }
    async fn patch_node_pool_status(
        &self,
        name: &str,
        s: &NodePoolStatus,
    ) -> Result<(), ClusterError> {
        self.switch
            .run(
                "patch_node_pool_status",
                self.inner.patch_node_pool_status(name, s),
                gone(),
            )
            .await
    }
    async fn annotate_node_claim(
        &self,
        name: &str,
        a: &BTreeMap<String, String>,
    ) -> Result<NodeClaim, ClusterError> {
        self.switch
            .run(
                "annotate_node_claim",
                self.inner.annotate_node_claim(name, a),
                gone(),
            )
            .await
    }
    async fn label_node(
        &self,
        name: &str,
        l: &BTreeMap<String, String>,
    ) -> Result<Node, ClusterError> {
        self.switch
            .run("label_node", self.inner.label_node(name, l), gone())
            .await
    }
    async fn relabel_node(
        &self,
        name: &str,
        l: &BTreeMap<String, Option<String>>,
    ) -> Result<Node, ClusterError> {
        self.switch
            .run("relabel_node", self.inner.relabel_node(name, l), gone())
            .await
    }
    async fn relabel_node_claim(
        &self,
        name: &str,
        l: &BTreeMap<String, Option<String>>,
    ) -> Result<NodeClaim, ClusterError> {
        self.switch
            .run(
                "relabel_node_claim",
                self.inner.relabel_node_claim(name, l),
                gone(),
            )
            .await
    }
    async fn create_node_claim(
        &self,
        pool: &NodePool,
        claim: NodeClaim,
    ) -> Result<NodeClaim, ClusterError> {
        self.switch
            .run(
                "create_node_claim",
                self.inner.create_node_claim(pool, claim),
                gone(),
            )
            .await
    }
    async fn patch_node_claim_status(
        &self,
        name: &str,
        rv: Option<&str>,
        s: &NodeClaimStatus,
    ) -> Result<NodeClaim, ClusterError> {
        self.switch
            .run(
                "patch_node_claim_status",
                self.inner.patch_node_claim_status(name, rv, s),
                gone(),
            )
            .await
    }
    async fn set_node_claim_conditions(
        &self,
        name: &str,
        c: &[Condition],
        now: Timestamp,
    ) -> Result<NodeClaim, ClusterError> {
        self.switch
            .run(
                "set_node_claim_conditions",
                self.inner.set_node_claim_conditions(name, c, now),
                gone(),
            )
            .await
    }
    async fn label_node_claim(
        &self,
        name: &str,
        l: &BTreeMap<String, String>,
    ) -> Result<NodeClaim, ClusterError> {
        self.switch
            .run(
                "label_node_claim",
                self.inner.label_node_claim(name, l),
                gone(),
            )
            .await
    }
    async fn delete_node_claim(
        &self,
        name: &str,
        uid: Option<&str>,
    ) -> Result<Deleted, ClusterError> {
        self.switch
            .run(
                "delete_node_claim",
                self.inner.delete_node_claim(name, uid),
                gone(),
            )
            .await
    }
    async fn taint_node(&self, node: &str, t: &Taint) -> Result<Node, ClusterError> {
        self.switch
            .run("taint_node", self.inner.taint_node(node, t), gone())
            .await
    }
    async fn untaint_node(&self, node: &str, key: &str) -> Result<Node, ClusterError> {
        self.switch
            .run("untaint_node", self.inner.untaint_node(node, key), gone())
            .await
    }
    async fn cordon_node(&self, node: &str, u: bool) -> Result<Node, ClusterError> {
        self.switch
            .run("cordon_node", self.inner.cordon_node(node, u), gone())
            .await
    }
    async fn update_node(&self, node: &Node) -> Result<Node, ClusterError> {
        self.switch
            .run("update_node", self.inner.update_node(node), gone())
            .await
    }
    async fn delete_node(&self, name: &str, uid: Option<&str>) -> Result<Deleted, ClusterError> {
        self.switch
            .run("delete_node", self.inner.delete_node(name, uid), gone())
            .await
    }
    async fn evict_pod(
        &self,
        ns: &str,
        name: &str,
        uid: Option<&str>,
    ) -> Result<Evicted, ClusterError> {
        self.switch
            .run("evict_pod", self.inner.evict_pod(ns, name, uid), gone())
            .await
    }
    async fn add_finalizer(&self, t: &Target, f: &str) -> Result<(), ClusterError> {
        self.switch
            .run("add_finalizer", self.inner.add_finalizer(t, f), gone())
            .await
    }
    async fn remove_finalizer(
        &self,
        t: &Target,
        f: &str,
        rv: Option<&str>,
    ) -> Result<(), ClusterError> {
        self.switch
            .run(
                "remove_finalizer",
                self.inner.remove_finalizer(t, f, rv),
                gone(),
            )
            .await
    }
    async fn emit_event(&self, e: &EventSpec, now: Timestamp) -> Result<(), ClusterError> {
        self.switch
            .run("emit_event", self.inner.emit_event(e, now), gone())
            .await
    }
    async fn acquire_lease(&self, r: &LeaseRequest) -> Result<LeaseOutcome, ClusterError> {
        self.switch
            .run("acquire_lease", self.inner.acquire_lease(r), gone())
            .await
    }
    async fn release_lease(&self, r: &LeaseRequest) -> Result<(), ClusterError> {
        self.switch
            .run("release_lease", self.inner.release_lease(r), gone())
            .await
    }
    async fn unavailable_offerings(
        &self,
        now: Timestamp,
    ) -> Result<UnavailableOfferings, ClusterError> {
        self.switch
            .run(
                "unavailable_offerings",
                self.inner.unavailable_offerings(now),
                gone(),
            )
            .await
    }
    async fn record_unavailable(
        &self,
        m: &UnavailableOfferings,
        now: Timestamp,
    ) -> Result<(), ClusterError> {
        self.switch
            .run(
                "record_unavailable",
                self.inner.record_unavailable(m, now),
                gone(),
            )
            .await
    }
}
