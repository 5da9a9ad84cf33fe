//! Where a NodeClaim's termination stands, as its conditions record it: draining its node
//! (`Drained` Unknown), then waiting for its volumes (`VolumesDetached` Unknown). The
//! termination state machine ([`crate::terminate`]) writes these conditions; the sweeps that
//! must leave a claim to it (garbage collection) read them here.

use jiff::Timestamp;
use kerf_api::v1::{ConditionStatus, NodeClaim};

use crate::claim;

/// The `Drained` condition's type.
pub const DRAINED: &str = "Drained";
/// The `VolumesDetached` condition's type.
pub const VOLUMES_DETACHED: &str = "VolumesDetached";

/// When the claim's drain began (its `Drained` condition turned Unknown), while it drains.
pub fn draining_since(c: &NodeClaim) -> Option<Timestamp> {
    let s = c.status.as_ref()?;
    let d = kerf_api::v1::common::find_condition(&s.conditions, DRAINED)?;
    (d.status == ConditionStatus::Unknown)
        .then(|| d.last_transition_time.parse().ok())
        .flatten()
}

/// Whether the claim already records the end of the wait for its volumes (True, or skipped).
pub fn volumes_settled(c: &NodeClaim) -> bool {
    let status = c.status.as_ref();
    let found =
        status.and_then(|s| kerf_api::v1::common::find_condition(&s.conditions, VOLUMES_DETACHED));
    found.is_some_and(|d| d.status != ConditionStatus::Unknown)
}

/// Whether the termination function is under way with the claim: draining its node, or
/// drained and not yet done waiting for its volumes. The sweep leaves such claims to it.
pub fn in_progress(c: &NodeClaim) -> bool {
    draining_since(c).is_some() || (claim::is_true(c, DRAINED) && !volumes_settled(c))
}
