//! Label keys: Karpenter's well-known keys, aliases and predicates come from `kerf-labels`
//! (defined once for every crate); this adds the key Kerf gives a `matchFields` requirement.

pub use kerf_labels::aws::{
    CAPACITY_RESERVATION_ID, CAPACITY_RESERVATION_INTERRUPTIBLE, CAPACITY_RESERVATION_PREFIX,
    CAPACITY_RESERVATION_TYPE, NODECLASS, PLACEMENT_GROUP_PARTITION,
};
pub use kerf_labels::{
    ARCH, CAPACITY_TYPE, DISRUPTED_TAINT, HOSTNAME, INITIALIZED, INSTANCE_TYPE, NAMESPACE_NAME,
    NODEPOOL, OS, REGION, REGISTERED, UNREGISTERED_TAINT, UNSCHEDULABLE_TAINT, WINDOWS_BUILD, ZONE,
    is_restricted, is_well_known, normalize,
};

/// The key a required node-affinity `matchFields` term on `metadata.name` becomes: no label
/// can have it (`:` is not allowed in label keys), and only existing nodes carry it.
pub const NODE_NAME_FIELD: &str = "kerf.dev/field:metadata.name";
