//! `kerf_nodepool_cost_per_hour`: what each NodePool's live NodeClaims cost per hour, each at
//! its catalog price (instance type, zone and capacity type from its labels), written by every
//! sweep so the dashboard can chart the fleet's price by NodePool.

use std::collections::BTreeMap;

use kerf_api::v1::NodeClaim;
use kerf_catalog::{CapacityType, Catalog};

use crate::claim;
use crate::ctx::Ctx;
use crate::metrics::names::{NODEPOOL_COST_PER_HOUR, NODEPOOL_MAX_COST_PER_HOUR};
use crate::ports::{Cloud, Cluster, Publisher};
use crate::view::View;

fn label<'a>(c: &'a NodeClaim, key: &str) -> Option<&'a str> {
    c.metadata
        .labels
        .as_ref()
        .and_then(|l| l.get(key))
        .map(String::as_str)
}

/// The hourly price of a claim's offering, when its labels name one the catalog prices.
pub fn price(catalog: &Catalog, c: &NodeClaim) -> Option<f64> {
    let name = label(c, kerf_labels::INSTANCE_TYPE)?;
    let zone = label(c, kerf_labels::ZONE)?;
    let ct = CapacityType::parse(label(c, kerf_labels::CAPACITY_TYPE)?)?;
    let it = catalog.instance_types.iter().find(|t| t.name == name)?;
    it.offerings
        .iter()
        .find(|o| o.zone == zone && o.capacity_type == ct)
        .map(|o| o.price)
}

/// Each NodePool's hourly cost (pools without claims cost 0).
pub fn by_pool(view: &View) -> BTreeMap<String, f64> {
    let mut out: BTreeMap<String, f64> = view
        .snap
        .node_pools
        .iter()
        .filter_map(|p| p.metadata.name.clone())
        .map(|n| (n, 0.0))
        .collect();
    for c in view
        .snap
        .node_claims
        .iter()
        .filter(|c| c.metadata.deletion_timestamp.is_none())
    {
        let Some(pool) = claim::pool_name(c) else {
            continue;
        };
        let catalog = view.catalogs.get(&c.spec.node_class_ref.name);
        if let Some(p) = catalog.and_then(|cat| price(cat, c))
            && let Some(total) = out.get_mut(pool)
        {
            *total += p;
        }
    }
    out
}

/// Each dollar-limited NodePool's limit (`kerf.dev/max-cost-per-hour`; a value that does
/// not parse is left out, as the pool is).
pub fn limits(view: &View) -> BTreeMap<String, f64> {
    view.snap
        .node_pools
        .iter()
        .filter_map(|p| {
            let max = kerf_convert::budget::max_cost_per_hour(p).ok()??;
            Some((p.metadata.name.clone()?, max))
        })
        .collect()
}

/// Records [`by_pool`] and [`limits`] as the invocation's metrics.
pub fn record<C: Cluster, K: Cloud, P: Publisher>(ctx: &Ctx<C, K, P>, view: &View) {
    for (pool, cost) in by_pool(view) {
        ctx.metrics
            .count(NODEPOOL_COST_PER_HOUR, &[("nodepool", &pool)], cost);
    }
    for (pool, max) in limits(view) {
        ctx.metrics
            .count(NODEPOOL_MAX_COST_PER_HOUR, &[("nodepool", &pool)], max);
    }
}
