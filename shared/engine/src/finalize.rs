//! Turns a finished packing run into a plan: each new claim gets its instance-type options
//! (every type that fits, cheapest first, truncated), the offering Kerf expects, and a name.

use std::hash::{Hash, Hasher};

use rustc_hash::{FxHashSet, FxHasher};

use crate::labels;
use crate::min_values::{MinValuesError, min_values_satisfied, relax_min_values};
use crate::model::{MinValuesPolicy, Options};
use crate::plan::{Launch, Nomination, Plan, ReasonKind, Unschedulable};
use crate::pools::{PoolCtx, PoolUnusable, TypeCtx};
use crate::requirements::{Requirement, Requirements};
use crate::res::{Res, ResIndex};
use crate::reserve::{self, Budget, Choice};
use crate::scheduler::Run;
use crate::slots::{Slot, SlotKind, ports_conflict};

/// Alphabet Kubernetes uses for generated name suffixes.
const ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";

/// Why a planned NodeClaim cannot be launched; `pool` names its NodePool.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LaunchError {
    #[error("nodepool {pool:?}: {why}")]
    Unusable { pool: String, why: PoolUnusable },
    #[error("nodepool {pool:?}: {err}")]
    MinValues { pool: String, err: MinValuesError },
    /// minValues broken once the options were cut to `max_types`.
    #[error("nodepool {pool:?}: {err} after truncating to {max_types} instance types")]
    MinValuesTruncated {
        pool: String,
        err: MinValuesError,
        max_types: usize,
    },
    #[error("nodepool {pool:?}: no instance type fits the claim")]
    NoFit { pool: String },
    #[error("nodepool {pool:?}: no instance type is offered")]
    NoTypeOffered { pool: String },
    #[error("nodepool {pool:?}: no offering")]
    NoOffering { pool: String },
}

impl serde::Serialize for LaunchError {
    /// As its message.
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// Pods placed and the hourly cost of a run, without building its plan.
pub fn evaluate(run: &Run<'_>) -> (usize, f64) {
    let mut placed = run.placed[..]
        .iter()
        .filter(|p| p.is_some_and(|s| s < run.existing))
        .count();
    let mut cost = 0.0;
    let mut budget = held_budget(run);
    for slot in bins(run) {
        let SlotKind::Bin { pool, target } = slot.kind else {
            continue;
        };
        let pc = &run.pools[pool];
        let used = pc.types[target].usable.minus(&slot.free);
        let charge = &pc.types[target].capacity;
        let (allowed, types) = reserved_options(pc, slot, &used, charge, usize::MAX, &mut budget);
        if let Some(off) = types.first().and_then(|t| t.cheapest(&allowed)) {
            placed += slot.pods.len();
            cost += off.price;
        }
    }
    (placed, cost)
}

/// The new claims of a run that hold pods.
fn bins<'r>(run: &'r Run<'_>) -> impl Iterator<Item = &'r Slot> {
    run.slots[run.existing..]
        .iter()
        .filter(|s| !s.pods.is_empty())
}

/// The reservations left once the claims have taken those they held while packing (the
/// rest may be taken by claims that held none).
fn held_budget(run: &Run<'_>) -> Budget {
    let mut budget = Budget::of(&run.pools);
    for id in bins(run).filter_map(|s| s.reservation.as_deref()) {
        budget.take(id);
    }
    budget
}

/// A claim's options (cheapest first, at most `max`) and the requirements they were chosen
/// under: the types that fit its pods, and in a limited pool only those no larger than what
/// it was charged (`charge`, its sizing type's capacity) so the limits hold whichever option
/// CreateFleet picks; narrowed to the reservation it launches into, if any.
fn reserved_options<'p, 't>(
    pc: &'p PoolCtx<'t>,
    slot: &Slot,
    used: &Res,
    charge: &Res,
    max: usize,
    budget: &mut Budget,
) -> (Requirements, Vec<&'p TypeCtx<'t>>) {
    let options = |reqs: &Requirements| -> Vec<&'p TypeCtx<'t>> {
        pc.compatible(reqs)
            .iter()
            .map(|&(t, _)| &pc.types[t])
            .filter(|t| option_fits(pc, t, slot, used, charge))
            .take(max)
            .collect()
    };
    let types = options(&slot.reqs);
    let choice = reserve::choose(budget, &slot.reqs, &types, slot.reservation.as_deref());
    if choice == Choice::Untouched {
        return (slot.reqs.clone(), types);
    }
    let allowed = reserve::narrow(&slot.reqs, &choice);
    let types = options(&allowed);
    (allowed, types)
}

/// Builds the plan of a run. Claims whose options break minValues after truncation are
/// dropped and their pods reported.
pub fn plan(run: &Run<'_>, ix: &ResIndex, opts: &Options, taken: &FxHashSet<String>) -> Plan {
    let (max_types, seed) = (opts.max_instance_types, opts.seed);
    let best_effort = opts.min_values_policy == MinValuesPolicy::BestEffort;
    let mut plan = Plan::new();
    let mut names = taken.clone();
    let mut lost: Vec<(usize, String)> = Vec::new();
    let mut budget = held_budget(run);
    for slot in bins(run) {
        let SlotKind::Bin { pool, target } = slot.kind else {
            continue;
        };
        let pc = &run.pools[pool];
        let used = pc.types[target].usable.minus(&slot.free);
        let sizing = Sizing {
            target,
            used: &used,
            max_types,
            best_effort,
        };
        match launch(run, slot, pc, &sizing, ix, &mut budget) {
            Ok(mut l) => {
                l.node_claim = name(pc.name(), seed, &mut names);
                plan.launches.push(l);
            }
            Err(e) => {
                let reason = e.to_string();
                lost.extend(slot.pods.iter().map(|&i| (i, reason.clone())));
            }
        }
    }
    for (i, p) in run.pods.iter().enumerate() {
        match run.placed[i] {
            Some(s) if s < run.existing => plan.nominations.push(Nomination {
                pod: p.pod.key(),
                node: run.slots[s].name().to_string(),
            }),
            Some(_) => {}
            None => plan.unschedulable.push(Unschedulable {
                pod: p.pod.key(),
                reason: run.reasons[i].1.clone(),
                kind: run.reasons[i].0,
            }),
        }
    }
    for (i, reason) in lost {
        plan.unschedulable.push(Unschedulable {
            pod: run.pods[i].pod.key(),
            reason,
            kind: ReasonKind::ClaimDropped,
        });
    }
    plan
}

/// What a new claim was sized for and how its options are chosen.
struct Sizing<'u> {
    /// Its sizing type.
    target: usize,
    /// What its pods use.
    used: &'u Res,
    max_types: usize,
    best_effort: bool,
}

fn launch(
    run: &Run<'_>,
    slot: &Slot,
    pc: &PoolCtx<'_>,
    sizing: &Sizing<'_>,
    ix: &ResIndex,
    budget: &mut Budget,
) -> Result<Launch, LaunchError> {
    let Sizing {
        target,
        used,
        max_types,
        best_effort,
    } = *sizing;
    let charge = &pc.types[target].capacity;
    let (allowed, types) = reserved_options(pc, slot, used, charge, max_types, budget);
    let mut reqs = allowed.clone();
    let relaxed = match min_values_satisfied(&allowed, &types) {
        Ok(()) => false,
        Err(_) if best_effort => relax_min_values(&mut reqs, &types),
        Err(err) => {
            return Err(LaunchError::MinValuesTruncated {
                pool: pc.name().to_string(),
                err,
                max_types,
            });
        }
    };
    let Some(best) = types.first() else {
        return Err(LaunchError::NoFit {
            pool: pc.name().to_string(),
        });
    };
    let mut l = options_launch(pc, best, &types, reqs, &allowed, relaxed)?;
    let mut requests = used.plus(&best.ds);
    requests.floor_zero();
    l.pods = slot.pods.iter().map(|&i| run.pods[i].pod.key()).collect();
    l.requests = ix.resources(&requests).to_strings();
    Ok(l)
}

/// An unnamed launch of pool `pc` offering `types` (cheapest first, `best` among them) at
/// `best`'s cheapest offering `allowed` permits, with no pods or requests yet: its
/// requirements are `reqs` without the pool key, narrowed to the options' instance types and
/// capacity types.
pub(crate) fn options_launch(
    pc: &PoolCtx<'_>,
    best: &TypeCtx<'_>,
    types: &[&TypeCtx<'_>],
    mut reqs: Requirements,
    allowed: &Requirements,
    relaxed: bool,
) -> Result<Launch, LaunchError> {
    let off = best
        .cheapest(allowed)
        .ok_or_else(|| LaunchError::NoOffering {
            pool: pc.name().to_string(),
        })?;
    reqs.remove(labels::NODEPOOL);
    reqs.add(
        labels::INSTANCE_TYPE,
        Requirement::is_in(types.iter().map(|t| t.it.name.clone())),
    );
    let filter = crate::pools::OfferingFilter::of(allowed);
    let mut cts: Vec<&str> = Vec::new();
    for o in types.iter().flat_map(|t| t.offerings.iter()) {
        let ct = o.capacity_type.as_str();
        if !cts.contains(&ct) && filter.admits(o) {
            cts.push(ct);
        }
    }
    reqs.add(
        labels::CAPACITY_TYPE,
        Requirement::is_in(cts.into_iter().map(str::to_string)),
    );
    Ok(Launch {
        node_claim: String::new(),
        node_pool: pc.name().to_string(),
        instance_type: best.it.name.clone(),
        capacity_type: off.capacity_type,
        zone: off.zone.clone(),
        price: off.price,
        instance_type_options: types.iter().map(|t| t.it.name.clone()).collect(),
        requirements: reqs.to_selectors(),
        pods: Vec::new(),
        requests: std::collections::BTreeMap::new(),
        min_values_relaxed: relaxed,
    })
}

/// An option a claim may offer: it holds the claim's pods with their DaemonSets, has no
/// host-port conflict, and stays within what the claim was charged against the limits.
fn option_fits(pc: &PoolCtx<'_>, t: &TypeCtx<'_>, slot: &Slot, used: &Res, charge: &Res) -> bool {
    fits_with_daemons(t, used)
        && !ports_conflict(&t.ds_ports, &slot.host_ports)
        && crate::volumes::type_holds(t.it, &slot.attached)
        && pc.within_charge(&t.capacity, charge)
}

fn fits_with_daemons(t: &TypeCtx<'_>, used: &Res) -> bool {
    t.alloc
        .0
        .iter()
        .zip(&used.0)
        .zip(&t.ds.0)
        .all(|((alloc, used), ds)| used.saturating_add(*ds) <= *alloc)
}

/// `<pool>-<5 chars>`, derived from the seed, unique among `taken`.
pub(crate) fn name(pool: &str, seed: u64, taken: &mut FxHashSet<String>) -> String {
    let mut h = FxHasher::default();
    (seed, pool, taken.len()).hash(&mut h);
    let mut x = h.finish();
    loop {
        let mut suffix = String::with_capacity(5);
        let mut y = x;
        for _ in 0..5 {
            suffix.push(ALPHABET[(y % ALPHABET.len() as u64) as usize] as char);
            y /= ALPHABET.len() as u64;
        }
        let n = format!("{pool}-{suffix}");
        if !taken.contains(&n) {
            taken.insert(n.clone());
            return n;
        }
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
    }
}
