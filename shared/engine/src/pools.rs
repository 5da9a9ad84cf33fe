//! NodePools prepared for scheduling: their requirements, the instance types and offerings
//! they may launch, DaemonSet overhead per instance type, and what their limits leave.

use std::cell::RefCell;
use std::rc::Rc;

use kerf_catalog::InstanceType;
use rustc_hash::FxHashMap;

use crate::cost::{COST_RESOURCE, micro, pool_cost, priced};
use crate::domains::Offered;
use crate::labels;
use crate::model::{DaemonSet, Effect, HostPort, NodePool, Snapshot, Taint};
use crate::podreqs::{Relaxation, strict_requirements};
use crate::requirements::{Requirement, RequirementError, Requirements};
use crate::res::{Res, ResIndex};
use crate::taints::first_untolerated;

/// An instance type as one pool sees it.
#[derive(Clone, Debug)]
pub struct TypeCtx<'a> {
    pub it: &'a InstanceType,
    pub region: &'a str,
    pub alloc: Res,
    pub capacity: Res,
    /// DaemonSet pods that would run on this type in this pool.
    pub ds: Res,
    /// `alloc - ds`: what pending pods may use.
    pub usable: Res,
    pub ds_ports: Vec<HostPort>,
    /// Available offerings allowed by the pool, cheapest first.
    pub offerings: Vec<Off>,
}

/// Keys an instance type's labels do not decide: offerings (zone, capacity type, partition,
/// capacity reservation), the pool and the node do.
pub const NOT_OF_THE_TYPE: [&str; 8] = [
    labels::ZONE,
    labels::CAPACITY_TYPE,
    labels::PLACEMENT_GROUP_PARTITION,
    labels::CAPACITY_RESERVATION_ID,
    labels::CAPACITY_RESERVATION_TYPE,
    labels::CAPACITY_RESERVATION_INTERRUPTIBLE,
    labels::NODEPOOL,
    labels::HOSTNAME,
];

/// An instance type's value for a label key (its labels, plus the catalog's region).
pub fn type_label<'a>(it: &'a InstanceType, region: &'a str, key: &str) -> Option<&'a str> {
    if key == labels::REGION && !region.is_empty() {
        return Some(region);
    }
    it.labels.get(key).map(String::as_str)
}

/// True when the type's labels satisfy `key req` (a key the type does not carry satisfies
/// only a requirement that allows absence, unless the key is a custom one types never carry).
pub fn type_satisfies(it: &InstanceType, region: &str, key: &str, req: &Requirement) -> bool {
    match type_label(it, region, key) {
        Some(v) => req.has(v),
        None => !labels::is_well_known(key) || req.allows_absent(),
    }
}

impl TypeCtx<'_> {
    /// The type's value for a label key (instance labels plus region).
    pub fn label(&self, key: &str) -> Option<&str> {
        type_label(self.it, self.region, key)
    }

    /// True when the type's labels satisfy `reqs` (zone and capacity type are checked on
    /// offerings; custom keys types never carry are not the type's concern).
    pub fn matches(&self, reqs: &Requirements) -> bool {
        reqs.iter().all(|(k, r)| {
            NOT_OF_THE_TYPE.contains(&k.as_str()) || type_satisfies(self.it, self.region, k, r)
        })
    }

    /// The cheapest offering allowed by `reqs`.
    pub fn cheapest(&self, reqs: &Requirements) -> Option<&Off> {
        let allowed = OfferingFilter::of(reqs);
        self.offerings.iter().find(|o| allowed.admits(o))
    }
}

pub use crate::offering_filter::{Off, OfferingFilter, offering_allowed};

/// A NodePool ready for scheduling.
#[derive(Clone, Debug)]
pub struct PoolCtx<'a> {
    pub np: &'a NodePool,
    pub reqs: Requirements,
    /// Shared by every packing run (immutable once prepared).
    pub types: Rc<[TypeCtx<'a>]>,
    /// Limited resources and what is left of them (`None` = unlimited).
    pub remaining: Option<Res>,
    pub nodes_left: Option<i64>,
    pub min_values: bool,
    /// Why the pool cannot launch anything at all.
    pub unusable: Option<PoolUnusable>,
    /// The zones and capacity types its types are offered in, with capacity now or not
    /// (empty when the pool is not ready or its requirements are invalid).
    pub offered: Rc<Offered>,
    /// The name of each resource vector slot.
    pub resource_names: Rc<[String]>,
    /// Compatible types per requirement set, shared by every packing run.
    cache: Rc<RefCell<FxHashMap<Requirements, Compatible>>>,
}

/// Why a NodePool cannot launch anything at all.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PoolUnusable {
    /// The pool is not ready (its node class is not, or it says why itself).
    #[error("not ready: {0}")]
    NotReady(String),
    #[error("invalid requirements: {0}")]
    InvalidRequirements(RequirementError),
    #[error("no instance type satisfies the nodepool requirements with an available offering")]
    NoInstanceType,
}

/// Types of a pool that satisfy some requirements with their cheapest allowed price,
/// cheapest first (ties by name).
pub type Compatible = Rc<[(usize, f64)]>;

impl PoolCtx<'_> {
    pub fn name(&self) -> &str {
        &self.np.name
    }

    /// The types (and prices) `reqs` allow, computed once per distinct requirement set.
    pub fn compatible(&self, reqs: &Requirements) -> Compatible {
        if let Some(c) = self.cache.borrow().get(reqs) {
            return c.clone();
        }
        let mut v: Vec<(usize, f64)> = self
            .types
            .iter()
            .enumerate()
            .filter(|(_, t)| t.matches(reqs))
            .filter_map(|(i, t)| t.cheapest(reqs).map(|o| (i, o.price)))
            .collect();
        // Indices follow names (see `prepare_one`): ties go to the first name.
        v.sort_unstable_by(|a, b| a.1.total_cmp(&b.1).then(a.0.cmp(&b.0)));
        let c: Compatible = v.into();
        self.cache.borrow_mut().insert(reqs.clone(), c.clone());
        c
    }

    /// True when launching a node with `capacity` stays within limits.
    pub fn within_limits(&self, capacity: &Res) -> bool {
        self.nodes_left.is_none_or(|n| n >= 1)
            && self
                .remaining
                .as_ref()
                .is_none_or(|r| limited_fits(r, capacity))
    }

    /// True when an option of `capacity` is no larger than `charge` in every limited
    /// resource: a claim charged `charge` against the limits may offer it to CreateFleet.
    pub fn within_charge(&self, capacity: &Res, charge: &Res) -> bool {
        self.remaining.as_ref().is_none_or(|r| {
            r.0.iter()
                .zip(capacity.0.iter().zip(&charge.0))
                .all(|(have, (c, limit))| *have == i64::MAX || c <= limit)
        })
    }

    /// Gives back what a claim that is no longer launched was charged.
    pub fn refund(&mut self, capacity: &Res) {
        if let Some(n) = &mut self.nodes_left {
            *n += 1;
        }
        if let Some(r) = &mut self.remaining {
            for (have, back) in r.0.iter_mut().zip(&capacity.0) {
                if *have != i64::MAX {
                    *have += back;
                }
            }
        }
    }

    pub fn charge(&mut self, capacity: &Res) {
        if let Some(n) = &mut self.nodes_left {
            *n -= 1;
        }
        if let Some(r) = &mut self.remaining {
            for (have, take) in r.0.iter_mut().zip(&capacity.0) {
                if *have != i64::MAX {
                    *have -= take;
                }
            }
        }
    }
}

fn limited_fits(remaining: &Res, capacity: &Res) -> bool {
    remaining
        .0
        .iter()
        .zip(&capacity.0)
        .all(|(have, take)| *have == i64::MAX || take <= have)
}

/// Pool requirements: spec requirements, template labels and the pool's own name.
pub fn pool_requirements(np: &NodePool) -> Result<Requirements, RequirementError> {
    let mut reqs = Requirements::from_selectors(&np.requirements)?;
    reqs.add_all(&Requirements::from_labels(&np.labels));
    reqs.add(labels::NODEPOOL, Requirement::is_in([np.name.clone()]));
    Ok(reqs)
}

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

pub(crate) fn prepare_one<'a>(snap: &'a Snapshot, np: &'a NodePool, ix: &ResIndex) -> PoolCtx<'a> {
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
    t.offerings = it
        .offerings
        .iter()
        .filter(|o| o.available)
        .map(|o| Off {
            zone: o.zone.clone(),
            capacity_type: o.capacity_type,
            price: o.price,
            partition: o.partition,
            reservation: o.reservation.clone().map(std::rc::Rc::new),
        })
        .filter(|o| offering_allowed(o, reqs))
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
