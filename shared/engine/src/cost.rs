//! Kerf's dollar limit per NodePool (`kerf.dev/max-cost-per-hour`), enforced like
//! `spec.limits`: the hourly price is one more limited dimension of every instance type a
//! pool may launch. An existing NodeClaim (or unclaimed Node) of the pool counts at the price
//! of its current offering; a new NodeClaim is charged at its most expensive option, each
//! option priced at the dearest offering the pool allows, so whatever CreateFleet picks stays
//! within the limit.

use crate::model::{NodePool, Snapshot};
use crate::plan::{CostLimit, Launch};
use crate::pools::{OfferingFilter, PoolCtx, pool_requirements};
use crate::requirements::Requirements;

pub use crate::price::{COST_RESOURCE, labelled_price, micro, pool_cost};

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
