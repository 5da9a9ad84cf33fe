//! NodePools prepared for scheduling: their requirements, the instance types and offerings
//! they may launch, DaemonSet overhead per instance type, and what their limits leave.

use std::cell::RefCell;
use std::rc::Rc;

use kerf_catalog::InstanceType;
use rustc_hash::FxHashMap;

use crate::labels;
use crate::model::{HostPort, NodePool};
use crate::offered::Offered;
use crate::requirements::{Requirement, RequirementError, Requirements};
use crate::res::Res;

mod build;

pub use crate::type_labels::{NOT_OF_THE_TYPE, type_label, type_satisfies};
pub use build::{prepare, prepare_one};

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

pub use crate::offering_filter::{Off, OfferingFilter};

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
