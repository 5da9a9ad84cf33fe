//! Preparing NodePools for scheduling from a snapshot: requirements, the instance types and
//! offerings each may launch with the DaemonSets they would run, and what limits leave.

use std::rc::Rc;

use kerf_catalog::InstanceType;

use super::{Off, OfferingFilter, PoolCtx, PoolUnusable, TypeCtx, pool_requirements};
use crate::labels;
use crate::model::{DaemonSet, Effect, NodePool, Snapshot, Taint};
use crate::offered::Offered;
use crate::podreqs::{Relaxation, strict_requirements};
use crate::price::{COST_RESOURCE, micro, pool_cost};
use crate::requirements::Requirements;
use crate::res::{Res, ResIndex};
use crate::taints::first_untolerated;

/// Prepares every usable pool, highest weight first, ties by name descending (Karpenter's
/// `OrderByWeight`).
pub fn prepare<'a>(snap: &'a Snapshot, ix: &ResIndex) -> Vec<PoolCtx<'a>> {
    let mut pools: Vec<PoolCtx<'a>> = snap
        .node_pools
        .iter()
        .filter(|p| !p.deleting)
        .map(|np| prepare_one(snap, np, ix))
        .collect();
    pools.sort_by(|a, b| {
        b.np.weight
            .cmp(&a.np.weight)
            .then(b.np.name.cmp(&a.np.name))
    });
    pools
}

pub fn prepare_one<'a>(snap: &'a Snapshot, np: &'a NodePool, ix: &ResIndex) -> PoolCtx<'a> {
    let mut pool = PoolCtx {
        np,
        reqs: Requirements::new(),
        types: Rc::from(Vec::new()),
        remaining: None,
        nodes_left: None,
        min_values: false,
        unusable: None,
        offered: Rc::default(),
        resource_names: (0..ix.len()).map(|s| ix.name(s).to_string()).collect(),
        cache: Rc::default(),
    };
    if let Some(why) = &np.unready {
        pool.unusable = Some(PoolUnusable::NotReady(why.clone()));
        return pool;
    }
    match pool_requirements(np) {
        Ok(r) => pool.reqs = r,
        Err(e) => {
            pool.unusable = Some(PoolUnusable::InvalidRequirements(e));
            return pool;
        }
    }
    pool.min_values = pool.reqs.iter().any(|(_, r)| r.min_values.is_some());
    let catalog = &np.catalog;
    pool.offered = Rc::new(Offered::of(
        &catalog.instance_types,
        &catalog.region,
        &pool.reqs,
    ));
    let daemons: Vec<&DaemonSet> = snap
        .daemon_sets
        .iter()
        .filter(|ds| daemon_fits_pool(ds, np, &pool.reqs))
        .collect();
    let mut types: Vec<TypeCtx<'a>> = np
        .catalog
        .instance_types
        .iter()
        .filter_map(|it| type_ctx(it, &np.catalog.region, &pool.reqs, &daemons, ix))
        .map(|t| priced(t, np, ix))
        .collect();
    // Type indices follow names, so ties between equally good types break by index.
    types.sort_by(|a, b| a.it.name.cmp(&b.it.name));
    pool.types = Rc::from(types);
    if pool.types.is_empty() {
        pool.unusable = Some(PoolUnusable::NoInstanceType);
    }
    apply_limits(&mut pool, snap, ix);
    pool
}

fn type_ctx<'a>(
    it: &'a InstanceType,
    region: &'a str,
    reqs: &Requirements,
    daemons: &[&DaemonSet],
    ix: &ResIndex,
) -> Option<TypeCtx<'a>> {
    let mut t = TypeCtx {
        it,
        region,
        alloc: ix.vec(&it.allocatable),
        capacity: ix.vec(&it.capacity),
        ds: Res::zero(ix.len()),
        usable: Res::zero(ix.len()),
        ds_ports: Vec::new(),
        offerings: Vec::new(),
    };
    if !t.matches(reqs) {
        return None;
    }
    let allowed = OfferingFilter::of(reqs);
    t.offerings = it
        .offerings
        .iter()
        .filter(|o| o.available && allowed.admits_offering(o))
        .map(|o| Off {
            zone: o.zone.clone(),
            capacity_type: o.capacity_type,
            price: o.price,
            partition: o.partition,
            reservation: o.reservation.clone().map(std::rc::Rc::new),
        })
        .collect();
    t.offerings.sort_by(|a, b| {
        a.price
            .total_cmp(&b.price)
            .then(a.zone.cmp(&b.zone))
            .then(a.capacity_type.cmp(&b.capacity_type))
            .then(a.partition.cmp(&b.partition))
    });
    if t.offerings.is_empty() {
        return None;
    }
    for ds in daemons {
        if daemon_fits_type(ds, &t) {
            t.ds.add(&ix.vec(&ds.pod.requests));
            t.ds_ports.extend(ds.pod.host_ports.iter().cloned());
        }
    }
    t.usable = t.alloc.minus(&t.ds);
    Some(t)
}

/// A DaemonSet runs on a pool's nodes when it tolerates the pool's taints (PreferNoSchedule
/// is tolerated implicitly) and its node requirements are compatible with the pool.
fn daemon_fits_pool(ds: &DaemonSet, np: &NodePool, pool_reqs: &Requirements) -> bool {
    let hard: Vec<Taint> = np
        .taints
        .iter()
        .filter(|t| t.effect != Effect::PreferNoSchedule)
        .cloned()
        .collect();
    if first_untolerated(&hard, &ds.pod.tolerations, false).is_some() {
        return false;
    }
    daemon_terms(ds)
        .iter()
        .any(|r| pool_reqs.compatible(r).is_ok())
}

fn daemon_fits_type(ds: &DaemonSet, t: &TypeCtx<'_>) -> bool {
    daemon_terms(ds).iter().any(|r| t.matches(r))
}

/// The DaemonSet's node requirements, one set per required affinity term (ORed).
fn daemon_terms(ds: &DaemonSet) -> Vec<Requirements> {
    let n = ds.pod.required_terms.len().max(1);
    (0..n)
        .filter_map(|i| {
            let relax = Relaxation {
                dropped_required_terms: i,
                ..Default::default()
            };
            strict_requirements(&ds.pod, &relax).ok()
        })
        .collect()
}

/// Limits minus the capacity of the pool's existing nodes and NodeClaims; the dollar limit
/// minus what they cost.
fn apply_limits(pool: &mut PoolCtx<'_>, snap: &Snapshot, ix: &ResIndex) {
    let cost = pool.np.max_cost_per_hour;
    if pool.np.limits.is_none() && cost.is_none() {
        return;
    }
    let empty = kerf_catalog::Resources::new();
    let limits = pool.np.limits.as_ref().unwrap_or(&empty);
    let name = &pool.np.name;
    let mut used = Res::zero(ix.len());
    let mut nodes = 0i64;
    let claimed: rustc_hash::FxHashSet<&str> = snap
        .node_claims
        .iter()
        .filter_map(|c| c.node_name.as_deref())
        .collect();
    for c in snap.node_claims.iter().filter(|c| &c.node_pool == name) {
        used.add(&ix.vec(&c.capacity));
        nodes += 1;
    }
    for n in snap
        .nodes
        .iter()
        .filter(|n| n.labels.get(labels::NODEPOOL) == Some(name))
    {
        if !claimed.contains(n.name.as_str()) {
            used.add(&ix.vec(&n.capacity));
            nodes += 1;
        }
    }
    let mut remaining = Res::filled(ix.len(), i64::MAX);
    for (k, v) in &limits.0 {
        if k == "nodes" {
            pool.nodes_left = Some(v / 1000 - nodes);
        } else if let Some(slot) = (0..ix.len()).find(|&s| ix.name(s) == k) {
            remaining.0[slot] = v - used.0[slot];
        }
    }
    if let (Some(max), Some(slot)) = (cost, ix.find(COST_RESOURCE)) {
        remaining.0[slot] = micro(max) - micro(pool_cost(snap, pool.np));
    }
    pool.remaining = Some(remaining);
}

/// A dollar-limited pool's type carries its hourly price as one more limited dimension of its
/// capacity: the dearest offering the pool allows (`cost`).
fn priced<'a>(mut t: TypeCtx<'a>, np: &NodePool, ix: &ResIndex) -> TypeCtx<'a> {
    if let (Some(_), Some(slot)) = (np.max_cost_per_hour, ix.find(COST_RESOURCE)) {
        t.capacity.0[slot] = micro(dearest(&t.offerings));
    }
    t
}

/// The dearest offering of a type's allowed offerings (sorted cheapest first).
fn dearest(offerings: &[Off]) -> f64 {
    offerings.iter().map(|o| o.price).fold(0.0, f64::max)
}
