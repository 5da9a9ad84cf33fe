//! Disruption planning: which NodeClaims Kerf would remove or replace now, and why every
//! other managed node stays. Karpenter's rules (candidates, budgets, do-not-disrupt,
//! PodDisruptionBudgets, nomination, `consolidateAfter`; emptiness, drift, multi- and
//! single-node consolidation in that order, the first method with commands ending the pass;
//! forceful expiration beside them), planned deterministically from the snapshot alone.

pub mod budgets;
mod candidates;
mod command;
pub mod drift;
mod evacuate;
mod methods;
mod pass;
pub mod pods;
mod replace;
mod simulate;
mod validate;

use crate::model::Options;
use crate::model::{NodePool, Snapshot};
use crate::plan::{Drifted, Method, Plan, PoolBudget, SkipKind};
use crate::summary::summarize;
use candidates::{Census, census};
use pass::Pass;

pub use evacuate::evacuate;
pub use validate::{Recorded, Rejection, validate};

/// Disruption knobs, with Karpenter's defaults.
#[derive(Clone, Debug)]
pub struct DisruptOptions {
    /// Replace spot nodes with cheaper spot nodes (Karpenter's `SpotToSpotConsolidation`
    /// feature gate, off by default).
    pub spot_to_spot: bool,
    /// At most this many instance types per replacement NodeClaim.
    pub max_instance_types: usize,
    /// Seed for replacement NodeClaim names.
    pub seed: u64,
    /// Minimise the cost of replacements beyond first-fit packing.
    pub optimize_cost: bool,
    /// Honour preferences until they must be relaxed (`PREFERENCE_POLICY=Respect`).
    pub respect_preferences: bool,
    /// Work bound: at most this many scheduling simulations per pass (deterministic, unlike
    /// a timeout).
    pub max_simulations: usize,
    /// Karpenter's own consolidation search instead of Kerf's: multi-node consolidation looks
    /// at the first 100 candidates only, and single-node consolidation takes the first
    /// candidate that can move rather than the best one.
    pub karpenter_search: bool,
    /// `MIN_VALUES_POLICY` for the replacements.
    pub min_values_policy: crate::model::MinValuesPolicy,
}

impl Default for DisruptOptions {
    fn default() -> Self {
        DisruptOptions {
            spot_to_spot: false,
            max_instance_types: kerf_labels::MAX_INSTANCE_TYPES,
            seed: 0,
            optimize_cost: true,
            respect_preferences: true,
            max_simulations: 5_000,
            karpenter_search: false,
            min_values_policy: crate::model::MinValuesPolicy::Strict,
        }
    }
}

impl DisruptOptions {
    /// The provisioning options replacements are planned with.
    pub fn provisioning(&self) -> Options {
        Options {
            respect_preferences: self.respect_preferences,
            max_instance_types: self.max_instance_types,
            seed: self.seed,
            optimize_cost: self.optimize_cost,
            min_values_policy: self.min_values_policy,
        }
    }
}

/// Plans disruption of the snapshot's NodeClaims: `disruptions`, `skipped`, `drifted` and
/// `budgets` of the plan (launches and pending pods are left to [`crate::provision`]).
pub fn disrupt(snap: &Snapshot, opts: &DisruptOptions) -> Plan {
    disrupt_with(snap, opts, &[], &[])
}

/// [`disrupt`] with NodeClaim names already taken by launches planned beside it, and the
/// nodes (or NodeClaims) provisioning nominated pending pods to beside it, which are not
/// disrupted (Karpenter's nomination protection).
pub(crate) fn disrupt_with(
    snap: &Snapshot,
    opts: &DisruptOptions,
    taken: &[String],
    nominated: &[String],
) -> Plan {
    let mut census = census(snap);
    let nominated: rustc_hash::FxHashSet<&str> = nominated.iter().map(String::as_str).collect();
    for c in census
        .candidates
        .iter_mut()
        .filter(|c| c.node_block.is_none())
    {
        if nominated.contains(c.node.name.as_str()) || nominated.contains(c.claim.name.as_str()) {
            c.node_block = Some((
                SkipKind::Nominated,
                "provisioning nominates pending pods to it in this plan".into(),
            ));
        }
    }
    let budgets = pool_budgets(snap, &census);
    let mut drifted: Vec<Drifted> = census
        .candidates
        .iter()
        .filter_map(|c| {
            c.drift.map(|reason| Drifted {
                node_claim: c.claim.name.clone(),
                reason,
            })
        })
        .collect();
    drifted.sort_by(|a, b| a.node_claim.cmp(&b.node_claim));
    let mut pass = Pass::new(snap, census, &budgets, opts);
    pass.names.extend(taken.iter().cloned());
    methods::expiration::run(&mut pass);
    let ended = if methods::emptiness::run(&mut pass) {
        Some(Method::Emptiness)
    } else if methods::drift::run(&mut pass) {
        Some(Method::Drift)
    } else {
        methods::consolidation::run(&mut pass)
    };
    if let Some(m) = ended {
        defer(&mut pass, m);
    }
    let mut plan = Plan::new();
    plan.disruptions = std::mem::take(&mut pass.commands);
    plan.skipped = pass.into_skipped();
    plan.drifted = drifted;
    plan.budgets = budgets;
    summarize(&mut plan, 0);
    plan
}

/// What each NodePool's budgets allow at the snapshot's `now`, per reason, after the nodes
/// already disrupting (Karpenter's `karpenter_nodepools_allowed_disruptions`).
pub fn allowed_disruptions(snap: &Snapshot) -> Vec<PoolBudget> {
    pool_budgets(snap, &census(snap))
}

fn pool_budgets(snap: &Snapshot, census: &Census<'_>) -> Vec<PoolBudget> {
    let pools: Vec<(&NodePool, budgets::PoolCount)> = snap
        .node_pools
        .iter()
        .filter(|p| p.active())
        .map(|p| (p, census.counts.get(&p.name).copied().unwrap_or_default()))
        .collect();
    budgets::pool_budgets(pools, snap.now)
}

/// Once `method` planned commands, candidates nothing else explains wait for a later pass.
fn defer(pass: &mut Pass<'_>, method: Method) {
    let why = format!(
        "{} planned commands this pass; later methods consider it on the next pass",
        method.name()
    );
    for i in pass.open().collect::<Vec<_>>() {
        if pass.verdicts[i].is_none() {
            pass.note(i, (SkipKind::Deferred, why.clone()));
        }
    }
}

/// The NodeClaims whose `Consolidatable` condition is true now, sorted, as Karpenter's
/// NodeClaim consolidation controller decides it: initialized, of a NodePool with a
/// `consolidateAfter` (not `Never`), and that long past its last pod event (or its
/// initialization, when no pod event is recorded). Claims being deleted are left out.
pub fn consolidatable(snap: &Snapshot) -> Vec<String> {
    let mut out: Vec<String> = snap
        .node_claims
        .iter()
        .filter(|c| !c.deleting && c.is_true(kerf_labels::conditions::INITIALIZED))
        .filter(|c| {
            let pool = snap
                .node_pools
                .iter()
                .find(|p| p.name == c.node_pool && p.unready.is_none());
            let after = pool.and_then(|p| p.disruption.consolidate_after);
            let init = c
                .condition(kerf_labels::conditions::INITIALIZED)
                .map(|k| k.since);
            match (after, init) {
                (Some(a), Some(init)) => {
                    let last = c.last_pod_event.unwrap_or(init).max(init);
                    snap.now >= last + a
                }
                _ => false,
            }
        })
        .map(|c| c.name.clone())
        .collect();
    out.sort();
    out
}

/// When a managed node next becomes due for a disruption method by itself: the earliest
/// future moment its `consolidateAfter` passes or its `expireAfter` runs out, per NodeClaim
/// (sorted by name). The disruption function sets a timer for each.
pub fn due_moments(snap: &Snapshot) -> Vec<(String, crate::model::Timestamp)> {
    let census = census(snap);
    let now = snap.now;
    let mut out: Vec<(String, crate::model::Timestamp)> = census
        .candidates
        .iter()
        .filter_map(|c| {
            [c.consolidatable_at, c.expires_at]
                .into_iter()
                .flatten()
                .filter(|&t| t > now)
                .min()
                .map(|t| (c.claim.name.clone(), t))
        })
        .collect();
    out.sort();
    out
}
