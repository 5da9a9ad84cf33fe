//! Launching one NodeClaim: the launch request derived from the claim alone (its
//! requirements, its requests, its node class's catalog), so a resumed launch after a crash
//! asks for exactly what the first attempt asked; and the status the result writes.
//!
//! Like the AWS provider: instance types that match the requirements and whose allocatable
//! holds the requests; a capacity reservation when the claim allows `reserved` and one has
//! room, else spot when the claim allows it and a spot offering is available, else on-demand;
//! the available offerings of that capacity type in allowed zones (and allowed partitions of a
//! partition placement group, and allowed reservations), cheapest first, at most 60 types.
//!
//! The one place that creates a NodeClaim for a planned launch ([`create`]) and launches it
//! ([`one`]), for provisioning, disruption replacements and interruption replacements.

mod create;
mod one;
mod partition;
mod report;

pub use create::{CreateError, Creation, create_claim};
pub use one::{LaunchOutcome, launch_claim};
pub use report::ProvisionReport;

use std::collections::BTreeMap;
use std::sync::Arc;

use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use kerf_api::v1::{ConditionStatus, EC2NodeClass, NodeClaim, NodeClaimStatus};
use kerf_catalog::capacity::resource::EFA;
use kerf_catalog::reservation::ReservedOffering;
use kerf_catalog::{CapacityType, Catalog, InstanceType, Resources};
use kerf_engine::requirements::{Requirements, SelectorRequirement};

use crate::claim::{self, condition};
use crate::names::{
    CAPACITY_TYPE, INSTANCE_TYPE, NODEPOOL, PLACEMENT_GROUP_PARTITION, ZONE, conditions,
};
use crate::ports::cloud::NodeTaint;
use crate::ports::{LaunchOption, LaunchRequest, Launched};
use kerf_labels::aws::{
    CAPACITY_RESERVATION_ID, CAPACITY_RESERVATION_INTERRUPTIBLE, CAPACITY_RESERVATION_TYPE,
};

/// Why no launch request could be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RequestError {
    #[error("invalid NodeClaim {field}: {message}")]
    Invalid { field: String, message: String },
    #[error("no instance type in the catalog satisfies the requirements and requests")]
    NoInstanceType,
    #[error("no available offering of any matching instance type")]
    NoOffering,
}

/// The claim's requirements as the engine's algebra.
pub fn requirements(claim: &NodeClaim) -> Result<Requirements, RequestError> {
    let sel: Vec<SelectorRequirement> = claim
        .spec
        .requirements
        .iter()
        .filter_map(|r| serde_json::to_value(r).ok())
        .filter_map(|v| serde_json::from_value(v).ok())
        .collect();
    Requirements::from_selectors(&sel).map_err(|e| RequestError::Invalid {
        field: "spec.requirements".into(),
        message: e.to_string(),
    })
}

/// The claim's resource requests.
pub fn requests(claim: &NodeClaim) -> Result<Resources, RequestError> {
    kerf_convert::resources(
        "spec.resources.requests",
        Some(&claim.spec.resources.requests),
    )
    .map_err(|e| RequestError::Invalid {
        field: e.field,
        message: e.message,
    })
}

/// Whether an instance type's own labels satisfy the requirements (zone, capacity type,
/// partition, reservation and pool are offering- or pool-level and checked elsewhere).
fn type_matches(it: &InstanceType, reqs: &Requirements) -> bool {
    reqs.iter().all(|(k, r)| match k.as_str() {
        ZONE
        | CAPACITY_TYPE
        | PLACEMENT_GROUP_PARTITION
        | NODEPOOL
        | CAPACITY_RESERVATION_ID
        | CAPACITY_RESERVATION_TYPE
        | CAPACITY_RESERVATION_INTERRUPTIBLE => true,
        _ => match it.labels.get(k) {
            Some(v) => r.has(v),
            None => !kerf_engine::labels::is_well_known(k) || r.allows_absent(),
        },
    })
}

fn allowed(reqs: &Requirements, key: &str, value: &str) -> bool {
    reqs.get(key).is_none_or(|r| r.has(value))
}

/// Whether the requirements admit an offering's reservation labels (only reserved offerings
/// carry them; others pass where a requirement lets the label be absent).
fn reservation_allowed(reqs: &Requirements, r: Option<&ReservedOffering>) -> bool {
    let keys = [
        CAPACITY_RESERVATION_ID,
        CAPACITY_RESERVATION_TYPE,
        CAPACITY_RESERVATION_INTERRUPTIBLE,
    ];
    match r {
        Some(r) => {
            let values = [r.id.as_str(), r.kind.as_str(), r.interruptible_label()];
            keys.iter().zip(values).all(|(k, v)| allowed(reqs, k, v))
        }
        None => keys
            .iter()
            .all(|k| reqs.get(k).is_none_or(|q| q.allows_absent())),
    }
}

/// The capacity type and offerings to launch with (one per type and zone: partitions share
/// the overrides, the launch template names the partition).
pub fn options(
    reqs: &Requirements,
    requests: &Resources,
    catalog: &Catalog,
    max_types: usize,
) -> Result<(CapacityType, Vec<LaunchOption>), RequestError> {
    let types: Vec<&InstanceType> = catalog
        .instance_types
        .iter()
        .filter(|it| type_matches(it, reqs) && it.allocatable.fits(requests))
        .collect();
    if types.is_empty() {
        return Err(RequestError::NoInstanceType);
    }
    let offers = |ct: CapacityType| -> Vec<LaunchOption> {
        let mut v: Vec<LaunchOption> = types
            .iter()
            .flat_map(|it| {
                it.offerings
                    .iter()
                    .filter(move |o| {
                        o.available
                            && o.capacity_type == ct
                            && allowed(reqs, ZONE, &o.zone)
                            && partition::allowed(reqs, o)
                            && reservation_allowed(reqs, o.reservation.as_ref())
                    })
                    .map(move |o| LaunchOption {
                        instance_type: it.name.clone(),
                        zone: o.zone.clone(),
                        price: o.price,
                        reservation: o.reservation.clone(),
                    })
            })
            .collect();
        v.sort_by(|a, b| {
            a.price
                .total_cmp(&b.price)
                .then_with(|| a.instance_type.cmp(&b.instance_type))
                .then_with(|| a.zone.cmp(&b.zone))
        });
        v.dedup_by(|a, b| {
            a.instance_type == b.instance_type
                && a.zone == b.zone
                && a.reservation.as_ref().map(|r| &r.id) == b.reservation.as_ref().map(|r| &r.id)
        });
        truncate_types(v, max_types)
    };
    for ct in [
        CapacityType::Reserved,
        CapacityType::Spot,
        CapacityType::OnDemand,
    ] {
        if !allowed(reqs, CAPACITY_TYPE, ct.as_str()) {
            continue;
        }
        let o = offers(ct);
        if !o.is_empty() {
            return Ok((ct, o));
        }
    }
    Err(RequestError::NoOffering)
}

/// Keeps the offerings of the first `max` distinct instance types (in order).
fn truncate_types(v: Vec<LaunchOption>, max: usize) -> Vec<LaunchOption> {
    let mut seen: Vec<String> = Vec::new();
    v.into_iter()
        .filter(|o| {
            if seen.contains(&o.instance_type) {
                return true;
            }
            if seen.len() == max {
                return false;
            }
            seen.push(o.instance_type.clone());
            true
        })
        .collect()
}

/// The launch request for `claim` (which must have a name and a UID: it exists).
pub fn request(
    claim: &NodeClaim,
    class: Arc<EC2NodeClass>,
    catalog: &Catalog,
    max_types: usize,
) -> Result<LaunchRequest, RequestError> {
    let reqs = requirements(claim)?;
    let (capacity_type, options) = options(&reqs, &requests(claim)?, catalog, max_types)?;
    let mut labels = claim.metadata.labels.clone().unwrap_or_default();
    for (k, r) in reqs.iter() {
        if r.len() == 1
            && !r.is_complement()
            && let Some(v) = r.any()
        {
            labels.entry(k.clone()).or_insert(v);
        }
    }
    labels.insert(CAPACITY_TYPE.into(), capacity_type.as_str().into());
    let offered = catalog
        .instance_types
        .iter()
        .filter(|it| options.iter().any(|o| o.instance_type == it.name))
        .flat_map(|it| &it.offerings);
    if let Some(p) = partition::chosen(&reqs, offered) {
        labels.insert(PLACEMENT_GROUP_PARTITION.into(), p.to_string());
    }
    let taints = claim
        .spec
        .taints
        .iter()
        .chain(&claim.spec.startup_taints)
        .map(|t| NodeTaint {
            key: t.key.clone(),
            value: t.value.clone(),
            effect: t.effect.as_str().into(),
        })
        .collect();
    let prioritized = claim
        .metadata
        .annotations
        .as_ref()
        .is_some_and(|a| a.contains_key(kerf_labels::PRICE_OVERLAY_APPLIED));
    Ok(LaunchRequest {
        prioritized,
        node_claim: claim::name(claim).to_string(),
        node_claim_uid: claim.metadata.uid.clone().unwrap_or_default(),
        node_pool: claim::pool_name(claim).unwrap_or_default().to_string(),
        node_class: class,
        capacity_type,
        options,
        labels,
        taints,
        efa_requested: claim.spec.resources.requests.contains_key(EFA),
    })
}

/// The labels a launched claim gets: the instance type's single-valued labels (with its
/// placement group's id), its zone, region and capacity type (as Karpenter copies them from
/// the instance), and in a partition group the partition the launch asked for (`asked`, the
/// request's label), else an empty one that registration fills.
pub fn launched_labels(
    l: &Launched,
    catalog: &Catalog,
    asked: &BTreeMap<String, String>,
) -> BTreeMap<String, String> {
    let mut labels = BTreeMap::new();
    if let Some(it) = catalog
        .instance_types
        .iter()
        .find(|t| t.name == l.instance_type)
    {
        labels.extend(it.labels.clone());
        if let Some(p) = partition::label(it, asked.get(PLACEMENT_GROUP_PARTITION)) {
            labels.insert(PLACEMENT_GROUP_PARTITION.into(), p);
        }
    }
    labels.insert(INSTANCE_TYPE.into(), l.instance_type.clone());
    labels.insert(ZONE.into(), l.zone.clone());
    labels.insert(CAPACITY_TYPE.into(), l.capacity_type.as_str().into());
    if let Some(r) = &l.reservation {
        labels.insert(CAPACITY_RESERVATION_ID.into(), r.id.clone());
        labels.insert(CAPACITY_RESERVATION_TYPE.into(), r.kind.as_str().into());
        labels.insert(
            CAPACITY_RESERVATION_INTERRUPTIBLE.into(),
            r.interruptible_label().into(),
        );
    }
    if !catalog.region.is_empty() {
        labels.insert(crate::names::REGION.into(), catalog.region.clone());
    }
    labels
}

/// The status after a successful launch: provider ID, image, capacity and allocatable of
/// the instance type, and `Launched=True`.
pub fn launched_status(
    current: &NodeClaim,
    l: &Launched,
    catalog: &Catalog,
    now: jiff::Timestamp,
) -> NodeClaimStatus {
    let mut s = claim::status(current);
    s.provider_id = Some(l.provider_id.clone());
    s.image_id = l.image_id.clone();
    if let Some(it) = catalog
        .instance_types
        .iter()
        .find(|t| t.name == l.instance_type)
    {
        s.capacity = quantities(&it.capacity);
        s.allocatable = quantities(&it.allocatable);
    }
    let updates = [
        condition(conditions::LAUNCHED, ConditionStatus::True, "Launched", ""),
        condition(
            conditions::REGISTERED,
            ConditionStatus::Unknown,
            "AwaitingReconciliation",
            "object is awaiting reconciliation",
        ),
        condition(
            conditions::INITIALIZED,
            ConditionStatus::Unknown,
            "AwaitingReconciliation",
            "object is awaiting reconciliation",
        ),
    ];
    let keep: Vec<_> = updates
        .into_iter()
        .filter(|u| {
            u.type_ == conditions::LAUNCHED || !s.conditions.iter().any(|c| c.type_ == u.type_)
        })
        .collect();
    s.conditions = claim::merge_conditions(&s.conditions, &keep, now);
    s
}

/// Non-zero resources as a ResourceList.
pub fn quantities(r: &Resources) -> BTreeMap<String, Quantity> {
    r.to_strings()
        .into_iter()
        .filter(|(k, _)| r.get(k) > 0)
        .map(|(k, v)| (k, Quantity(v)))
        .collect()
}

#[cfg(test)]
mod tests;
