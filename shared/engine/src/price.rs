//! Hourly prices for the dollar limit: the resource dimension they take in the engine's
//! vectors, and what a pool's existing NodeClaims and Nodes cost.

use kerf_catalog::{CapacityType, Catalog, InstanceType};

use crate::labels;
use crate::model::{NodePool, Snapshot};

/// The resource dimension the hourly price takes in the engine's vectors (never a real
/// resource: no pod requests it and no node has it).
pub const COST_RESOURCE: &str = "kerf.dev/cost-per-hour";

/// A price in USD per hour as the vector's integer unit (micro-dollars per hour).
pub fn micro(price: f64) -> i64 {
    (price * 1e6).round() as i64
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
