//! Kerf's dollar limit per NodePool (`kerf.dev/max-cost-per-hour`), enforced like
//! `spec.limits`: the hourly price is one more limited dimension of every instance type a
//! pool may launch. An existing NodeClaim (or unclaimed Node) of the pool counts at the price
//! of its current offering; a new NodeClaim is charged at its most expensive option, each
//! option priced at the dearest offering the pool allows, so whatever CreateFleet picks stays
//! within the limit.

use kerf_catalog::{CapacityType, Catalog, InstanceType};

use crate::labels;
use crate::model::{NodePool, Snapshot};
use crate::plan::{CostLimit, Launch};
use crate::pools::{Off, OfferingFilter, PoolCtx, TypeCtx, pool_requirements};
use crate::requirements::Requirements;
use crate::res::ResIndex;

/// The resource dimension the hourly price takes in the engine's vectors (never a real
/// resource: no pod requests it and no node has it).
pub const COST_RESOURCE: &str = "kerf.dev/cost-per-hour";

/// A price in USD per hour as the vector's integer unit (micro-dollars per hour).
pub fn micro(price: f64) -> i64 {
    (price * 1e6).round() as i64
}

/// The dearest offering of a type's allowed offerings (sorted cheapest first).
pub(crate) fn dearest(offerings: &[Off]) -> f64 {
    offerings.iter().map(|o| o.price).fold(0.0, f64::max)
}

fn offering_price(it: &InstanceType, zone: &str, ct: &str) -> Option<f64> {
    let ct = CapacityType::parse(ct)?;
    it.offerings
        .iter()
        .find(|o| o.zone == zone && o.capacity_type == ct)
        .map(|o| o.price)
}

/// The hourly price of an existing NodeClaim or Node from its labels: its offering's price,
/// or (a claim not launched yet) the dearest offering of the types and capacity types its
/// labels allow; 0 when the catalog does not know the type.
pub fn labelled_price(catalog: &Catalog, l: &std::collections::BTreeMap<String, String>) -> f64 {
    let Some(name) = l.get(labels::INSTANCE_TYPE) else {
        return 0.0;
    };
    let Some(it) = catalog.instance_types.iter().find(|t| &t.name == name) else {
        return 0.0;
    };
    match (l.get(labels::ZONE), l.get(labels::CAPACITY_TYPE)) {
        (Some(z), Some(ct)) => offering_price(it, z, ct),
        _ => None,
    }
    .unwrap_or_else(|| {
        it.offerings
            .iter()
            .filter(|o| l.get(labels::ZONE).is_none_or(|z| &o.zone == z))
            .filter(|o| {
                l.get(labels::CAPACITY_TYPE)
                    .is_none_or(|c| c == o.capacity_type.as_str())
            })
            .map(|o| o.price)
            .fold(0.0, f64::max)
    })
}

/// What the pool's existing NodeClaims, and Nodes without one, cost per hour now.
pub fn pool_cost(snap: &Snapshot, np: &NodePool) -> f64 {
    let claimed: rustc_hash::FxHashSet<&str> = snap
        .node_claims
        .iter()
        .filter_map(|c| c.node_name.as_deref())
        .collect();
    let claims: f64 = snap
        .node_claims
        .iter()
        .filter(|c| c.node_pool == np.name)
        .map(|c| labelled_price(&np.catalog, &c.labels))
        .sum();
    let nodes: f64 = snap
        .nodes
        .iter()
        .filter(|n| n.labels.get(labels::NODEPOOL) == Some(&np.name))
        .filter(|n| !claimed.contains(n.name.as_str()))
        .map(|n| labelled_price(&np.catalog, &n.labels))
        .sum();
    claims + nodes
}

/// What a launch is charged against its pool's dollar limit: its most expensive option, at
/// the dearest offering the pool allows.
pub fn charge(np: &NodePool, reqs: &Requirements, launch: &Launch) -> f64 {
    let allowed = OfferingFilter::of(reqs);
    launch
        .instance_type_options
        .iter()
        .filter_map(|name| np.catalog.instance_types.iter().find(|t| &t.name == name))
        .map(|it| {
            it.offerings
                .iter()
                .filter(|o| o.available && allowed.admits_offering(o))
                .map(|o| o.price)
                .fold(0.0, f64::max)
        })
        .fold(0.0, f64::max)
}

/// A dollar-limited pool's type carries its hourly price as one more limited dimension of its
/// capacity: the dearest offering the pool allows (`cost`).
pub(crate) fn priced<'a>(mut t: TypeCtx<'a>, np: &NodePool, ix: &ResIndex) -> TypeCtx<'a> {
    if let (Some(_), Some(slot)) = (np.max_cost_per_hour, ix.find(COST_RESOURCE)) {
        t.capacity.0[slot] = micro(dearest(&t.offerings));
    }
    t
}

/// What a dollar-limited pool has left per hour (`None`: no dollar limit).
pub(crate) fn left(pool: &PoolCtx<'_>) -> Option<f64> {
    let slot = cost_slot(pool)?;
    let have = pool.remaining.as_ref()?.0[slot];
    (have != i64::MAX).then(|| (have.max(0) as f64) / 1e6)
}

/// True when type `t` of the pool costs no more than its dollar limit leaves.
pub(crate) fn affordable(pool: &PoolCtx<'_>, t: usize) -> bool {
    let (Some(slot), Some(r)) = (cost_slot(pool), pool.remaining.as_ref()) else {
        return true;
    };
    r.0[slot] == i64::MAX || pool.types[t].capacity.0[slot] <= r.0[slot]
}

fn cost_slot(pool: &PoolCtx<'_>) -> Option<usize> {
    pool.np.max_cost_per_hour?;
    pool.resource_names.iter().position(|n| n == COST_RESOURCE)
}

/// Each dollar-limited pool's limit, current cost and what `launches` are charged.
pub fn limits(snap: &Snapshot, launches: &[Launch]) -> Vec<CostLimit> {
    let mut out: Vec<CostLimit> = snap
        .node_pools
        .iter()
        .filter_map(|np| {
            let max = np.max_cost_per_hour?;
            let reqs = pool_requirements(np).unwrap_or_default();
            let current = pool_cost(snap, np);
            let planned: f64 = launches
                .iter()
                .filter(|l| l.node_pool == np.name)
                .map(|l| charge(np, &reqs, l))
                .sum();
            Some(CostLimit {
                node_pool: np.name.clone(),
                max_cost_per_hour: max,
                current_cost_per_hour: round6(current),
                planned_cost_per_hour: round6(planned),
                remaining_per_hour: round6(max - current - planned),
            })
        })
        .collect();
    out.sort_by(|a, b| a.node_pool.cmp(&b.node_pool));
    out
}

fn round6(x: f64) -> f64 {
    (x * 1e6).round() / 1e6 + 0.0
}

#[cfg(test)]
#[path = "cost_tests.rs"]
mod tests;
