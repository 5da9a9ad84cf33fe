//! Drift: a NodeClaim no longer matches what its NodePool and EC2NodeClass would launch now.
//! Checked in Karpenter's order, first match wins: NodePool hash, requirements, instance type
//! gone, then the node class (hash, AMI, security groups, subnet, capacity reservation,
//! placement group). Hashes only compare when the claim was stamped with the same hash
//! version, so claims stamped by Karpenter (another version) never drift on upgrade.

use std::collections::BTreeMap;

use kerf_labels::aws::{EC2NODECLASS_HASH, EC2NODECLASS_HASH_VERSION, PLACEMENT_GROUP_ID};
use kerf_labels::{CAPACITY_TYPE, INSTANCE_TYPE, NODEPOOL_HASH, NODEPOOL_HASH_VERSION, ZONE};

use crate::model::{NodeClaim, NodeClass, NodePool, ResolvedPlacementGroup, Timestamp};
use crate::plan::DriftReason;
use crate::requirements::Requirements;

/// Claims younger than this are not checked for a missing instance type (Karpenter waits an
/// hour, so a catalog refresh cannot drift fresh nodes).
const INSTANCE_TYPE_CHECK_AGE: i64 = 3600;

/// Why `claim` (with its node's labels) drifted from `pool` and `class`, if it did.
pub fn drift(
    claim: &NodeClaim,
    node_labels: &BTreeMap<String, String>,
    pool: &NodePool,
    class: Option<&NodeClass>,
    now: Timestamp,
) -> Option<DriftReason> {
    if hash_drifted(
        claim,
        NODEPOOL_HASH,
        NODEPOOL_HASH_VERSION,
        &pool.hash,
        &pool.hash_version,
    ) {
        return Some(DriftReason::NodePoolDrifted);
    }
    if requirements_drifted(claim, node_labels, pool) {
        return Some(DriftReason::RequirementsDrifted);
    }
    if now - claim.created >= INSTANCE_TYPE_CHECK_AGE && instance_type_gone(claim, pool) {
        return Some(DriftReason::InstanceTypeNotFound);
    }
    class.and_then(|c| class_drift(claim, pool, c))
}

/// Both hashes stamped with the same version, and different.
fn hash_drifted(
    claim: &NodeClaim,
    key: &str,
    version_key: &str,
    hash: &str,
    version: &str,
) -> bool {
    match (
        claim.annotations.get(key),
        claim.annotations.get(version_key),
    ) {
        (Some(h), Some(v)) => !hash.is_empty() && v == version && h != hash,
        _ => false,
    }
}

/// Karpenter's strict check: every requirement of the pool's spec holds for the claim's
/// labels (its node's labels fill keys the claim lacks); a key neither has must be one the
/// requirement allows to be absent.
fn requirements_drifted(
    claim: &NodeClaim,
    node_labels: &BTreeMap<String, String>,
    pool: &NodePool,
) -> bool {
    let Ok(reqs) = Requirements::from_selectors(&pool.requirements) else {
        return false;
    };
    let label = |k: &str| {
        claim
            .labels
            .get(k)
            .or_else(|| node_labels.get(k))
            .map(String::as_str)
    };
    !reqs.matches_labels(label)
}

/// The claim's instance type is not in the pool's catalog, or has no offering (available or
/// not) in the claim's zone and capacity type.
fn instance_type_gone(claim: &NodeClaim, pool: &NodePool) -> bool {
    let Some(name) = claim.labels.get(INSTANCE_TYPE) else {
        return false;
    };
    let Some(it) = pool.catalog.instance_types.iter().find(|t| &t.name == name) else {
        return true;
    };
    let zone = claim.labels.get(ZONE);
    let ct = claim.labels.get(CAPACITY_TYPE);
    !it.offerings.iter().any(|o| {
        zone.is_none_or(|z| &o.zone == z)
            && ct.is_none_or(|c| {
                c == o.capacity_type.as_str()
                    // A reserved node may fall back to on-demand.
                    || (c == kerf_labels::CAPACITY_TYPE_RESERVED
                        && o.capacity_type == kerf_catalog::CapacityType::OnDemand)
            })
    })
}

/// Node class drift: hash, then AMI, security groups, subnet, capacity reservation (the
/// instance's, when known), placement group.
fn class_drift(claim: &NodeClaim, pool: &NodePool, class: &NodeClass) -> Option<DriftReason> {
    if hash_drifted(
        claim,
        EC2NODECLASS_HASH,
        EC2NODECLASS_HASH_VERSION,
        &class.hash,
        &class.hash_version,
    ) {
        return Some(DriftReason::NodeClassDrift);
    }
    if ami_drifted(claim, pool, class) {
        return Some(DriftReason::AmiDrift);
    }
    if let Some(sgs) = &claim.security_group_ids
        && !class.security_groups.is_empty()
    {
        let mut have: Vec<&String> = sgs.iter().collect();
        let mut want: Vec<&String> = class.security_groups.iter().collect();
        have.sort();
        have.dedup();
        want.sort();
        want.dedup();
        if have != want {
            return Some(DriftReason::SecurityGroupDrift);
        }
    }
    if let Some(subnet) = &claim.subnet_id
        && !class.subnets.is_empty()
        && !class.subnets.contains(subnet)
    {
        return Some(DriftReason::SubnetDrift);
    }
    if claim
        .capacity_reservation
        .as_ref()
        .is_some_and(|r| !class.capacity_reservations.contains(r))
    {
        return Some(DriftReason::CapacityReservationDrift);
    }
    placement_group_drifted(claim, class).then_some(DriftReason::PlacementGroupDrift)
}

/// The claim's placement-group label differs from the group the class resolves to now (a
/// selector added, removed or changed); never when that group is not known.
fn placement_group_drifted(claim: &NodeClaim, class: &NodeClass) -> bool {
    if class.placement_group == ResolvedPlacementGroup::Unknown {
        return false;
    }
    let have = claim
        .labels
        .get(PLACEMENT_GROUP_ID)
        .map(String::as_str)
        .filter(|id| !id.is_empty());
    have != class.placement_group.id()
}

/// The claim's image is not the AMI the node class would pick for its instance type now:
/// the first AMI (newest first) whose requirements the type's labels meet.
fn ami_drifted(claim: &NodeClaim, pool: &NodePool, class: &NodeClass) -> bool {
    if claim.image_id.is_empty() || class.amis.is_empty() {
        return false;
    }
    let type_labels = claim
        .labels
        .get(INSTANCE_TYPE)
        .and_then(|n| pool.catalog.instance_types.iter().find(|t| &t.name == n))
        .map(|t| &t.labels);
    let label = |k: &str| {
        type_labels
            .and_then(|l| l.get(k))
            .or_else(|| claim.labels.get(k))
            .map(String::as_str)
    };
    let chosen = class.amis.iter().find(|a| {
        Requirements::from_selectors(&a.requirements).is_ok_and(|r| r.matches_labels(label))
    });
    chosen.is_none_or(|a| a.id != claim.image_id)
}

#[cfg(test)]
#[path = "drift_tests.rs"]
mod tests;
