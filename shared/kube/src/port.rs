//! The Cluster port: everything Kerf reads from and writes to the Kubernetes API.

use crate::error::ClusterError;
use k8s_openapi::api::apps::v1::DaemonSet;
use k8s_openapi::api::core::v1::{Node, Pod, Taint};
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use kerf_api::v1::{Condition, EC2NodeClass, NodeClaim, NodeClaimStatus, NodePool};
use std::collections::BTreeMap;
use std::future::Future;
use std::time::Duration;

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
    /// Karpenter reason, see [`crate::reasons`].
    pub reason: String,
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
    /// Upserts conditions by type (keeping lastTransitionTime when the status is unchanged).
    fn set_node_claim_conditions(
        &self,
        name: &str,
        conditions: &[Condition],
    ) -> impl Future<Output = Result<NodeClaim, ClusterError>> + Send;
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
    /// Records a Kubernetes Event.
    fn emit_event(
        &self,
        event: &EventSpec,
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
}
