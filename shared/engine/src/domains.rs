//! The topology domains a scheduling run knows of, as Karpenter builds them: for zones,
//! capacity types and placement-group partitions, what each NodePool's instance types are
//! offered in (the catalog's zones,
//! which the EC2NodeClass subnets already bound) within the pool's requirements, whether those
//! offerings have capacity now or not; for other keys, what the pool's launchable types carry;
//! and the labels of the nodes that stay.
//!
//! A zone whose offerings are all unavailable for a while (insufficient capacity) therefore
//! stays a domain: a `DoNotSchedule` spread keeps the pods that belong there pending instead of
//! stacking them in the other zones, and a `ScheduleAnyway` spread gives way.

use std::collections::BTreeSet;

use crate::labels;
use crate::model::Snapshot;
use crate::pools::PoolCtx;
use crate::topology::Topology;
use crate::view::Overlay;

/// The domains `pool` offers for `key`.
fn pool_domains(pool: &PoolCtx<'_>, key: &str) -> BTreeSet<String> {
    match key {
        labels::ZONE => pool.offered.zones.clone(),
        labels::CAPACITY_TYPE => pool.offered.capacity_types.clone(),
        labels::PLACEMENT_GROUP_PARTITION => pool.offered.partitions.clone(),
        _ if pool.unusable.is_none() => (0..pool.types.len())
            .flat_map(|t| crate::slots::bin_domains(pool, t, key, &pool.reqs))
            .collect(),
        _ => BTreeSet::new(),
    }
}

/// Registers the domains each topology key can take, from pools and the nodes that stay.
pub fn add_universe(
    topo: &mut Topology,
    pools: &[PoolCtx<'_>],
    snap: &Snapshot,
    overlay: Overlay<'_>,
) {
    let keys: Vec<String> = topo
        .keys()
        .into_iter()
        .filter(|k| *k != labels::HOSTNAME)
        .map(str::to_string)
        .collect();
    for key in &keys {
        for pool in pools {
            for v in pool_domains(pool, key) {
                topo.add_domain(key, &v, &pool.np.taints);
            }
        }
        for n in snap
            .nodes
            .iter()
            .filter(|n| !n.deleting && !overlay.gone(&n.name))
        {
            // A partition label is empty until registration reads the partition EC2 chose.
            let unknown = |v: &String| key == labels::PLACEMENT_GROUP_PARTITION && v.is_empty();
            if let Some(v) = n.labels.get(key).filter(|v| !unknown(v)) {
                topo.add_domain(key, v, &n.taints);
            }
        }
    }
}

#[cfg(test)]
#[path = "domains_tests.rs"]
mod tests;
