//! Scheduling with persistent volumes, as Karpenter does it: a claim's topology constrains
//! the node (never the pod's affinity that topology spread and affinity count domains with),
//! and distinct CSI volumes per driver on a node stay within its attach limit — the CSINode's
//! count on existing nodes, the instance type's EBS limit on new NodeClaims.

use kerf_catalog::InstanceType;

use crate::model::{AttachedVolume, EBS_CSI_DRIVER, PodVolumes};
use crate::pools::PoolCtx;
use crate::requirements::{RequirementError, Requirements};
use crate::slots::{Slot, SlotKind};

/// At most this many combinations of the claims' alternatives are tried per pod.
const MAX_COMBINATIONS: usize = 16;

/// The requirements of each combination of one alternative per claim (every claim must
/// hold), first alternatives first: the first claim's alternatives vary slowest. Combinations
/// whose requirements contradict each other are dropped.
pub fn combinations(v: &PodVolumes) -> Result<Vec<Requirements>, RequirementError> {
    let mut out = vec![Requirements::new()];
    for t in &v.topology {
        let mut alts = Vec::with_capacity(t.alternatives.len());
        for a in &t.alternatives {
            alts.push(Requirements::from_selectors(a)?);
        }
        let mut next = Vec::new();
        for base in &out {
            for alt in &alts {
                if next.len() == MAX_COMBINATIONS {
                    break;
                }
                if base.is_compatible(alt) {
                    let mut r = base.clone();
                    r.add_all(alt);
                    next.push(r);
                }
            }
        }
        out = next;
    }
    Ok(out)
}

/// The attach limit for `driver` on `slot`: the node's CSINode count, an in-flight
/// NodeClaim's EBS limit (its smallest instance-type option's, no CSINode yet), the target
/// type's EBS limit on a new NodeClaim.
fn limit(slot: &Slot, driver: &str, pools: &[PoolCtx<'_>]) -> Option<u32> {
    match &slot.kind {
        SlotKind::Node(_) | SlotKind::Claim(_) => slot.volume_limits.as_ref()?.get(driver).copied(),
        SlotKind::Bin { pool, target } if driver == EBS_CSI_DRIVER => {
            pools[*pool].types[*target].it.ebs_volume_limit
        }
        SlotKind::Bin { .. } => None,
    }
}

/// Distinct claims of `driver` in `used` and `adding` together.
fn count(used: &[AttachedVolume], adding: &[AttachedVolume], driver: &str) -> usize {
    let on_node = used.iter().filter(|v| v.driver == driver).count();
    let new = adding
        .iter()
        .filter(|v| v.driver == driver && used.binary_search(v).is_err())
        .count();
    on_node + new
}

/// Whether `slot` can attach the pod's volumes within its limits.
pub fn attach_fits(adding: &[AttachedVolume], slot: &Slot, pools: &[PoolCtx<'_>]) -> bool {
    adding.iter().all(|v| {
        limit(slot, &v.driver, pools)
            .is_none_or(|max| count(&slot.attached, adding, &v.driver) <= max as usize)
    })
}

/// Records the pod's volumes as attached to the slot (kept sorted and distinct).
pub fn attach(used: &mut Vec<AttachedVolume>, adding: &[AttachedVolume]) {
    for v in adding {
        if let Err(at) = used.binary_search(v) {
            used.insert(at, v.clone());
        }
    }
}

/// Whether a node of type `it` can attach the EBS volumes of `used`.
pub fn type_holds(it: &InstanceType, used: &[AttachedVolume]) -> bool {
    match it.ebs_volume_limit {
        None => true,
        Some(max) => count(used, &[], EBS_CSI_DRIVER) <= max as usize,
    }
}

/// Distinct EBS claims of a pod, to rule out types too small for it alone.
pub fn pod_holds(it: &InstanceType, adding: &[AttachedVolume]) -> bool {
    adding.is_empty() || {
        let mut used = Vec::new();
        attach(&mut used, adding);
        type_holds(it, &used)
    }
}

#[cfg(test)]
#[path = "volumes_tests.rs"]
mod tests;
