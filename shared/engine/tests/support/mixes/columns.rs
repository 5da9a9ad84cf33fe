//! The lower bound's inputs for a mix: LP groups, and one column per available offering of
//! each pool the groups may use.

use kerf_catalog::Resources;
use kerf_engine::model::NodePool;
use kerf_engine::requirements::Requirements;

use super::super::lp::{Column, DIMS, Group};
use super::{KEYS, Mix, SCALE, pool_reqs};

/// LP groups and columns for a mix: every available offering of each pool, open to the
/// groups of that pool whose requirements admit it, with that pool's DaemonSet overhead.
pub fn lp_inputs(m: &Mix) -> (Vec<Group>, Vec<Column>) {
    let mut columns = Vec::new();
    for (pi, pool) in m.snapshot.node_pools.iter().enumerate() {
        let ds = m
            .snapshot
            .daemon_sets
            .iter()
            .zip(&m.daemons_on)
            .filter(|(_, on)| on[pi])
            .fold(Resources::new(), |mut a, (d, _)| {
                a.add(&d.pod.requests);
                a
            });
        for it in &pool.catalog.instance_types {
            columns.extend(type_columns(m, pi, pool, it, &ds));
        }
    }
    let groups = m
        .groups
        .iter()
        .map(|(_, _, d, n)| Group { req: *d, count: *n })
        .collect();
    (groups, columns)
}

fn type_columns(
    m: &Mix,
    pi: usize,
    pool: &NodePool,
    it: &kerf_catalog::InstanceType,
    ds: &Resources,
) -> Vec<Column> {
    let label = |k: &str| {
        it.labels
            .get(k)
            .cloned()
            .or_else(|| (k == "topology.kubernetes.io/region").then(|| "us-east-1".into()))
    };
    let mut usable = [0.0; DIMS];
    for (i, k) in KEYS.iter().enumerate() {
        usable[i] = (it.allocatable.get(k) - ds.get(k)) as f64 / SCALE[i];
    }
    let reqs: Vec<Option<Requirements>> = m
        .groups
        .iter()
        .map(|(pools, r, _, _)| {
            pools.contains(&pi).then(|| {
                let mut all = pool_reqs(pool);
                all.add_all(r);
                all
            })
        })
        .collect();
    let mut out = Vec::new();
    for o in it.offerings.iter().filter(|o| o.available) {
        let mut groups = 0u64;
        for (g, r) in reqs.iter().enumerate() {
            let Some(r) = r else { continue };
            // Keys the pool sets as labels hold on every node it launches.
            let ok = r.iter().all(|(k, req)| match k.as_str() {
                "topology.kubernetes.io/zone" => req.has(&o.zone),
                "karpenter.sh/capacity-type" => req.has(o.capacity_type.as_str()),
                _ if pool.labels.contains_key(k) => true,
                _ => label(k).map_or(req.allows_absent(), |v| req.has(&v)),
            });
            if ok {
                groups |= 1 << g;
            }
        }
        if groups != 0 {
            out.push(Column {
                price: o.price,
                usable,
                groups,
            });
        }
    }
    out
}
