//! The names the control layer writes: Karpenter's labels, annotations, taints and finalizer
//! (from `kerf-labels`), and the NodeClaim condition types.

pub use kerf_labels::aws::{
    NODECLAIM_TAG, NODECLASS, PLACEMENT_GROUP_ID, PLACEMENT_GROUP_PARTITION,
};
pub use kerf_labels::{
    CAPACITY_TYPE, DISRUPTED_TAINT, DO_NOT_SYNC_TAINTS, HOSTNAME, INITIALIZED, INSTANCE_TYPE,
    NODEPOOL, NODEPOOL_HASH, NODEPOOL_HASH_VERSION, REGION, REGISTERED, TERMINATION_FINALIZER,
    UNREGISTERED_TAINT, ZONE, is_ephemeral_taint,
};

/// NodeClaim condition types.
pub mod conditions {
    pub const LAUNCHED: &str = "Launched";
    pub const REGISTERED: &str = "Registered";
    pub const INITIALIZED: &str = "Initialized";
    pub const READY: &str = "Ready";
}

/// EC2NodeClass condition types beside `Ready`.
pub mod class_conditions {
    /// The class's placement group resolved (or it has none); part of `Ready`.
    pub const PLACEMENT_GROUP_READY: &str = "PlacementGroupReady";
    /// The class's capacity reservations were discovered (only with the `ReservedCapacity`
    /// gate on); part of `Ready`.
    pub const CAPACITY_RESERVATIONS_READY: &str = "CapacityReservationsReady";
}

/// Resources every node has; initialization checks the others (extended resources).
pub const CORE_RESOURCES: [&str; 4] = ["cpu", "memory", "pods", "ephemeral-storage"];
