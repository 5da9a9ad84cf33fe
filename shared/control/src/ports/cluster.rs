//! The Cluster port: everything Kerf reads from and writes to the Kubernetes API.
//! Implemented on `kube::Client` by `kerf-kube` (and used against the in-process API server
//! of `kerf-sim` in tests).
use jiff::Timestamp;
use k8s_openapi::api::apps::v1::DaemonSet;
use k8s_openapi::api::core::v1::{
    Namespace, Node, PersistentVolume, PersistentVolumeClaim, Pod, Taint,
};
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use k8s_openapi::api::storage::v1::{CSINode, StorageClass, VolumeAttachment};
use kerf_api::v1::{
    Condition, EC2NodeClass, EC2NodeClassStatus, NodeClaim, NodeClaimStatus, NodePool,
    NodePoolStatus,
};
use kerf_catalog::unavailable::UnavailableOfferings;
use std::collections::BTreeMap;
use std::future::Future;
use std::time::Duration;

/// A failed cluster operation, typed by what the caller should do.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ClusterError {
    /// The object does not exist (404).
    #[error("not found: {0}")]
    NotFound(String),
    /// Stale resourceVersion, failed precondition, or name taken (409): re-read and retry.
    #[error("conflict: {0}")]
    Conflict(String),
    /// The server refused for now, e.g. a PodDisruptionBudget blocks an eviction (429).
    #[error("blocked: {message}")]
    Blocked {
        /// Server hint, when given (`Retry-After` / `details.retryAfterSeconds`).
        retry_after: Option<Duration>,
        /// The server's message and causes.
        message: String,
    },
    /// Network trouble, timeouts, 5xx, expired lists: retry with backoff.
    #[error("transient: {0}")]
    Transient(String),
    /// Invalid request, forbidden, unauthorized, undecodable: retrying will not help.
    #[error("fatal: {0}")]
    Fatal(String),
}

impl ClusterError {
    /// Whether retrying later can succeed.
    pub fn is_retryable(&self) -> bool {
        matches!(
            self,
            Self::Conflict(_) | Self::Blocked { .. } | Self::Transient(_)
        )
    }

    /// Whether this is a 404.
    pub fn is_not_found(&self) -> bool {
        matches!(self, Self::NotFound(_))
    }

    /// Whether this is a 409.
    pub fn is_conflict(&self) -> bool {
        matches!(self, Self::Conflict(_))
    }
}

/// One read of the cluster state a decision needs.
#[derive(Debug, Clone, Default)]
pub struct Snapshot {
    /// Non-terminal pods, all namespaces.
    pub pods: Vec<Pod>,
    /// Nodes.
    pub nodes: Vec<Node>,
    /// NodeClaims.
    pub node_claims: Vec<NodeClaim>,
    /// NodePools.
    pub node_pools: Vec<NodePool>,
    /// EC2NodeClasses.
    pub node_classes: Vec<EC2NodeClass>,
    /// DaemonSets, all namespaces.
    pub daemon_sets: Vec<DaemonSet>,
    /// PodDisruptionBudgets, all namespaces.
    pub pdbs: Vec<PodDisruptionBudget>,
    /// Namespaces (their labels select pods for affinity terms).
    pub namespaces: Vec<Namespace>,
    /// PersistentVolumeClaims, all namespaces (pods' volume topology and attach limits).
    pub persistent_volume_claims: Vec<PersistentVolumeClaim>,
    /// PersistentVolumes (where bound claims' volumes can be reached).
    pub persistent_volumes: Vec<PersistentVolume>,
    /// StorageClasses (unbound claims' binding mode and allowed topologies).
    pub storage_classes: Vec<StorageClass>,
    /// CSINodes (nodes' attach limits per CSI driver).
    pub csi_nodes: Vec<CSINode>,
    /// NodeOverlays (`karpenter.sh/v1alpha1`; none when the CRD is not installed).
    pub node_overlays: Vec<kerf_api::v1alpha1::NodeOverlay>,
    /// The list resourceVersion of each collection, keyed by plural.
    pub resource_versions: BTreeMap<&'static str, String>,
}

/// Which object a finalizer or event is about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// A Node.
    Node(String),
    /// A NodeClaim.
    NodeClaim(String),
}

/// The result of a delete.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Deleted {
    /// The object is gone now.
    Gone,
    /// The object has finalizers (or a grace period) and is terminating.
    Terminating,
    /// The object did not exist (idempotent delete).
    AlreadyGone,
}

/// The result of an eviction that was not blocked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Evicted {
    /// The API server accepted the eviction.
    Evicted,
    /// The pod was already gone, or was replaced by another with the same name (404/409).
    AlreadyGone,
}

/// Event type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventType {
    /// Normal.
    Normal,
    /// Warning.
    Warning,
}

/// The object an event is recorded on.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct InvolvedObject {
    /// e.g. `karpenter.sh/v1`.
    pub api_version: String,
    /// e.g. `NodeClaim`.
    pub kind: String,
    /// Name.
    pub name: String,
    /// Namespace, empty for cluster-scoped objects.
    pub namespace: String,
    /// UID.
    pub uid: String,
}

/// A Kubernetes Event to record (core/v1, as Karpenter's client-go recorder writes them).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EventSpec {
    /// The object the event is about.
    pub involved: InvolvedObject,
    /// Normal or Warning.
    pub type_: EventType,
    /// Karpenter's reason.
    pub reason: super::EventReason,
    /// Message.
    pub message: String,
}

/// A request to take or renew a coordination.k8s.io/v1 Lease.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeaseRequest {
    /// Namespace of the Lease.
    pub namespace: String,
    /// Name of the Lease.
    pub name: String,
    /// Our identity (`holderIdentity`).
    pub holder: String,
    /// `leaseDurationSeconds`.
    pub duration: Duration,
    /// The caller's clock.
    pub now: jiff::Timestamp,
}

/// The state of a Lease after an attempt to take it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LeaseOutcome {
    /// We hold it until `expires`.
    Held {
        /// renewTime + duration.
        expires: jiff::Timestamp,
        /// `leaseTransitions`.
        transitions: i32,
    },
    /// Someone else holds an unexpired lease.
    HeldByOther {
        /// Their identity.
        holder: String,
        /// When their lease runs out unless renewed.
        expires: jiff::Timestamp,
    },
}

/// Everything Kerf does with the Kubernetes API. Every writer is idempotent and, where it
/// modifies an existing object, conditional on its resourceVersion.
pub trait Cluster: Send + Sync {
    /// Reads pods, nodes, NodeClaims, NodePools, EC2NodeClasses, DaemonSets and PDBs.
    fn snapshot(&self) -> impl Future<Output = Result<Snapshot, ClusterError>> + Send;
    /// Lists the NodeClaims only.
    fn node_claims(&self) -> impl Future<Output = Result<Vec<NodeClaim>, ClusterError>> + Send;
    /// One NodeClaim, if it exists.
    fn node_claim(
        &self,
        name: &str,
    ) -> impl Future<Output = Result<Option<NodeClaim>, ClusterError>> + Send;
    /// One Node, if it exists.
    fn node(&self, name: &str) -> impl Future<Output = Result<Option<Node>, ClusterError>> + Send;
    /// The pods bound to a node (all phases).
    fn pods_on_node(
        &self,
        node: &str,
    ) -> impl Future<Output = Result<Vec<Pod>, ClusterError>> + Send;
    /// The VolumeAttachments (`storage.k8s.io/v1`) whose `spec.nodeName` is `node`.
    fn volume_attachments(
        &self,
        node: &str,
    ) -> impl Future<Output = Result<Vec<VolumeAttachment>, ClusterError>> + Send;
    /// One PersistentVolumeClaim, if it exists.
    fn persistent_volume_claim(
        &self,
        namespace: &str,
        name: &str,
    ) -> impl Future<Output = Result<Option<PersistentVolumeClaim>, ClusterError>> + Send;
    /// Deletes a pod with a grace period (`None`: the pod's own), bypassing PDBs: the
    /// termination grace period's last resort.
    fn delete_pod(
        &self,
        namespace: &str,
        name: &str,
        uid: Option<&str>,
        grace_seconds: Option<i64>,
    ) -> impl Future<Output = Result<Deleted, ClusterError>> + Send;
    /// Creates a NodeClaim for `pool` (generateName `<pool>-`, ownerReference, finalizer).
    fn create_node_claim(
        &self,
        pool: &NodePool,
        claim: NodeClaim,
    ) -> impl Future<Output = Result<NodeClaim, ClusterError>> + Send;
    /// Replaces a NodeClaim's status, conditional on `resource_version` when given.
    fn patch_node_claim_status(
        &self,
        name: &str,
        resource_version: Option<&str>,
        status: &NodeClaimStatus,
    ) -> impl Future<Output = Result<NodeClaim, ClusterError>> + Send;
    /// Upserts conditions by type (keeping lastTransitionTime when the status is unchanged;
    /// an empty lastTransitionTime becomes `now`).
    fn set_node_claim_conditions(
        &self,
        name: &str,
        conditions: &[Condition],
        now: Timestamp,
    ) -> impl Future<Output = Result<NodeClaim, ClusterError>> + Send;
    /// Merges labels into a NodeClaim's metadata.
    fn label_node_claim(
        &self,
        name: &str,
        labels: &BTreeMap<String, String>,
    ) -> impl Future<Output = Result<NodeClaim, ClusterError>> + Send;
    /// Sets and removes NodeClaim labels in one merge patch (`None` removes the key).
    fn relabel_node_claim(
        &self,
        name: &str,
        labels: &BTreeMap<String, Option<String>>,
    ) -> impl Future<Output = Result<NodeClaim, ClusterError>> + Send;
    /// Replaces an EC2NodeClass's status.
    fn patch_node_class_status(
        &self,
        name: &str,
        status: &EC2NodeClassStatus,
    ) -> impl Future<Output = Result<EC2NodeClass, ClusterError>> + Send;
    /// Replaces a NodePool's status (the whole of it: resources no longer counted go).
    fn patch_node_pool_status(
        &self,
        name: &str,
        status: &NodePoolStatus,
    ) -> impl Future<Output = Result<(), ClusterError>> + Send;
    /// Replaces a NodeOverlay's status. Clusters that serve no NodeOverlays (the simulated
    /// ones) keep the default, which writes nothing.
    fn patch_node_overlay_status(
        &self,
        name: &str,
        status: &kerf_api::v1alpha1::NodeOverlayStatus,
    ) -> impl Future<Output = Result<(), ClusterError>> + Send {
        let _ = (name, status);
        async { Ok(()) }
    }
    /// Merges annotations into a NodeClaim's metadata; an empty value removes the key.
    fn annotate_node_claim(
        &self,
        name: &str,
        annotations: &BTreeMap<String, String>,
    ) -> impl Future<Output = Result<NodeClaim, ClusterError>> + Send;
    /// Merges labels into a Node's metadata.
    fn label_node(
        &self,
        name: &str,
        labels: &BTreeMap<String, String>,
    ) -> impl Future<Output = Result<Node, ClusterError>> + Send;
    /// Sets and removes Node labels in one merge patch (`None` removes the key).
    fn relabel_node(
        &self,
        name: &str,
        labels: &BTreeMap<String, Option<String>>,
    ) -> impl Future<Output = Result<Node, ClusterError>> + Send;
    /// Deletes a NodeClaim (optionally only if its uid matches).
    fn delete_node_claim(
        &self,
        name: &str,
        uid: Option<&str>,
    ) -> impl Future<Output = Result<Deleted, ClusterError>> + Send;
    /// Adds a taint (replacing one with the same key and effect).
    fn taint_node(
        &self,
        node: &str,
        taint: &Taint,
    ) -> impl Future<Output = Result<Node, ClusterError>> + Send;
    /// Removes every taint with `key`.
    fn untaint_node(
        &self,
        node: &str,
        key: &str,
    ) -> impl Future<Output = Result<Node, ClusterError>> + Send;
    /// Sets `spec.unschedulable`.
    fn cordon_node(
        &self,
        node: &str,
        unschedulable: bool,
    ) -> impl Future<Output = Result<Node, ClusterError>> + Send;
    /// Replaces a Node, conditional on the resourceVersion it carries.
    fn update_node(&self, node: &Node) -> impl Future<Output = Result<Node, ClusterError>> + Send;
    /// Deletes a Node (optionally only if its uid matches).
    fn delete_node(
        &self,
        name: &str,
        uid: Option<&str>,
    ) -> impl Future<Output = Result<Deleted, ClusterError>> + Send;
    /// Evicts a pod through the Eviction API; a PDB block is `Err(Blocked)` at once.
    fn evict_pod(
        &self,
        namespace: &str,
        name: &str,
        uid: Option<&str>,
    ) -> impl Future<Output = Result<Evicted, ClusterError>> + Send;
    /// Adds a finalizer if missing.
    fn add_finalizer(
        &self,
        target: &Target,
        finalizer: &str,
    ) -> impl Future<Output = Result<(), ClusterError>> + Send;
    /// Removes a finalizer, conditional on the caller's resourceVersion when given.
    fn remove_finalizer(
        &self,
        target: &Target,
        finalizer: &str,
        resource_version: Option<&str>,
    ) -> impl Future<Output = Result<(), ClusterError>> + Send;
    /// Records a Kubernetes Event at `now` (a repeat bumps the existing Event's count).
    fn emit_event(
        &self,
        event: &EventSpec,
        now: Timestamp,
    ) -> impl Future<Output = Result<(), ClusterError>> + Send;
    /// Takes or renews a Lease.
    fn acquire_lease(
        &self,
        req: &LeaseRequest,
    ) -> impl Future<Output = Result<LeaseOutcome, ClusterError>> + Send;
    /// Gives up a Lease we hold (no-op otherwise).
    fn release_lease(
        &self,
        req: &LeaseRequest,
    ) -> impl Future<Output = Result<(), ClusterError>> + Send;
    /// The unavailable-offerings cache (ICE), without entries expired at `now`.
    fn unavailable_offerings(
        &self,
        now: Timestamp,
    ) -> impl Future<Output = Result<UnavailableOfferings, ClusterError>> + Send;
    /// Merges marks into the unavailable-offerings cache.
    fn record_unavailable(
        &self,
        marks: &UnavailableOfferings,
        now: Timestamp,
    ) -> impl Future<Output = Result<(), ClusterError>> + Send;
}
