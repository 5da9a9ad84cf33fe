//! Karpenter's names the control layer writes: the finalizer, labels, taints, annotations,
//! condition types and reasons (well-known label keys come from the engine).

pub use kerf_engine::labels::{
    CAPACITY_TYPE, DISRUPTED_TAINT, HOSTNAME, INITIALIZED, INSTANCE_TYPE, NODECLASS, NODEPOOL,
    REGION, REGISTERED, ZONE,
};

/// The finalizer on NodeClaims and Nodes.
pub const TERMINATION_FINALIZER: &str = "karpenter.sh/termination";
/// The taint every node registers with until Kerf has synced it with its NodeClaim.
pub const UNREGISTERED_TAINT: &str = "karpenter.sh/unregistered";
/// A node label that opts out of NodeClaim → Node taint sync.
pub const DO_NOT_SYNC_TAINTS: &str = "karpenter.sh/do-not-sync-taints";
/// The NodePool hash annotation (and its version) copied onto NodeClaims.
pub const NODEPOOL_HASH: &str = "karpenter.sh/nodepool-hash";
pub const NODEPOOL_HASH_VERSION: &str = "karpenter.sh/nodepool-hash-version";
/// The instance tag naming the NodeClaim an instance was launched for.
pub const NODECLAIM_TAG: &str = "karpenter.sh/nodeclaim";

/// Taints a node carries while it starts up, which initialization waits out.
pub fn is_ephemeral_taint(key: &str) -> bool {
    matches!(
        key,
        "node.kubernetes.io/not-ready"
            | "node.kubernetes.io/unreachable"
            | "node.cloudprovider.kubernetes.io/uninitialized"
            | UNREGISTERED_TAINT
    ) || key.starts_with("readiness.k8s.io/")
}

/// NodeClaim condition types.
pub mod conditions {
    pub const LAUNCHED: &str = "Launched";
    pub const REGISTERED: &str = "Registered";
    pub const INITIALIZED: &str = "Initialized";
    pub const READY: &str = "Ready";
}

/// Resources every node has; initialization checks the others (extended resources).
pub const CORE_RESOURCES: [&str; 4] = ["cpu", "memory", "pods", "ephemeral-storage"];
