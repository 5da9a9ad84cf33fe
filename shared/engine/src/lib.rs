//! Kerf's decision engine. Pure: it takes a [`Snapshot`] of the cluster and the instance
//! catalog and returns a [`Plan`] as data; it never performs I/O, reads a clock or draws
//! randomness, so the same input always yields the same plan.
//!
//! Provisioning follows Karpenter's scheduler (existing nodes, then in-flight NodeClaims,
//! then new NodeClaims from NodePools by weight; requirements, taints, topology, affinity,
//! preferences relaxed in Karpenter's order) and then minimises the hourly cost of what it
//! launches by comparing packing policies and resizing every new claim to its cheapest fit.

pub mod confpack;
pub mod cost;
pub mod cron;
pub mod disruption;
pub mod labels;
pub mod model;
pub mod overlay;
pub mod plan;
pub mod podreqs;
pub mod requirements;
pub mod selector;
pub mod statics;
pub mod taints;
pub mod time;

mod conflict;
mod domains;
mod finalize;
mod fit;
#[cfg(test)]
mod fixtures;
mod leaving;
mod lpfit;
mod min_values;
mod offering_filter;
mod open;
mod pools;
mod prepare;
mod refusal;
mod repack;
mod res;
mod reserve;
mod scheduler;
mod slots;
mod topology;
mod volumes;

pub use disruption::{
    DisruptOptions, Recorded, Rejection, allowed_disruptions, consolidatable, disrupt, due_moments,
    evacuate, validate,
};
pub use model::{Options, Snapshot};
pub use plan::Plan;

use rustc_hash::FxHashSet;

use crate::open::Policy;
use crate::plan::{ReasonKind, Unschedulable};
use crate::prepare::Overlay;
use crate::requirements::Operator;
use crate::res::ResIndex;
use crate::scheduler::Run;

/// Plans capacity for the snapshot's pending pods.
pub fn provision(snap: &Snapshot, opts: &Options) -> Plan {
    let taken: FxHashSet<String> = snap.node_claims.iter().map(|c| c.name.clone()).collect();
    let mut plan = provision_with(snap, opts, &taken);
    plan.cost_limits = cost::limits(snap, &plan.launches);
    plan
}

/// [`provision`] naming new NodeClaims apart from `taken`.
/// The pods of nodes being deleted are placed too ([`leaving`]).
pub(crate) fn provision_with(snap: &Snapshot, opts: &Options, taken: &FxHashSet<String>) -> Plan {
    let prep = Prepared::new(snap);
    let leaving = leaving::Leaving::of(snap);
    let overlay = if leaving.nodes.is_empty() {
        Overlay::default()
    } else {
        Overlay {
            gone: Some(&leaving.nodes),
            moved: Some(&leaving.moved),
            cached: None,
        }
    };
    plan_prepared(snap, &prep, &leaving.pods, overlay, opts, taken)
}

/// What every scheduling run over one snapshot shares: the resource index, the pools ready
/// for scheduling (limits charged with what exists), the pending pods and those rejected up
/// front. Disruption simulations build it once and run many times.
pub(crate) struct Prepared<'a> {
    ix: ResIndex,
    pools: Vec<pools::PoolCtx<'a>>,
    pending: Vec<usize>,
    rejected: Vec<Unschedulable>,
    /// Node slots and namespaces, for callers that plan the same snapshot many times.
    cached: Option<prepare::Cached>,
}

impl<'a> Prepared<'a> {
    pub(crate) fn new(snap: &'a Snapshot) -> Self {
        let ix = resource_index(snap);
        let (pending, rejected) = classify(snap);
        let pools = pools::prepare(snap, &ix);
        Prepared {
            ix,
            pools,
            pending,
            rejected,
            cached: None,
        }
    }

    /// Also computes what does not depend on an overlay, for many runs.
    pub(crate) fn for_many_runs(snap: &'a Snapshot) -> Self {
        let mut p = Prepared::new(snap);
        p.cached = Some(prepare::Cached::new(snap, &p.ix));
        p
    }
}

/// Plans the pending pods plus `moved` (bound pods placed again) with the cluster seen
/// through `overlay`.
pub(crate) fn plan_prepared(
    snap: &Snapshot,
    prep: &Prepared<'_>,
    moved: &[usize],
    overlay: Overlay<'_>,
    opts: &Options,
    taken: &FxHashSet<String>,
) -> Plan {
    let mut pending = prep.pending.clone();
    pending.extend_from_slice(moved);
    let overlay = Overlay {
        cached: overlay.cached.or(prep.cached.as_ref()),
        ..overlay
    };
    let rejected_count = prep.rejected.len();
    // Karpenter's sizing first. Claims sized for their largest option can exhaust NodePool
    // limits early, so when pods are left over in a snapshot with limits, sizing for the
    // most cost-efficient type is tried too and the run placing more pods wins.
    let run_with = |policy| {
        let base = prepare::base(snap, &prep.ix, pools_for(prep, opts), &pending, overlay);
        let mut run = Run::new(base, policy, opts.respect_preferences);
        run.solve();
        let score = finalize::evaluate(&run);
        (run, score)
    };
    let mut best = run_with(Policy::Largest);
    let limited = prep
        .pools
        .iter()
        .any(|p| p.remaining.is_some() || p.nodes_left.is_some());
    if best.1.0 < pending.len() && opts.optimize_cost && limited {
        let other = run_with(Policy::Efficient(0));
        if better(other.1, best.1) {
            best = other;
        }
    }
    // Cost repacking rebuilds each pool's unconstrained claims and keeps only cheaper results
    // (the per-claim choice of the cheapest fitting type happens in `finalize`).
    if opts.optimize_cost {
        repack::repack(&mut best.0, opts.max_instance_types);
    }
    let mut plan = finalize::plan(&best.0, &prep.ix, opts, taken);
    plan.unschedulable.extend(prep.rejected.iter().cloned());
    plan.nominations.sort_by(|a, b| a.pod.cmp(&b.pod));
    plan.unschedulable.sort_by(|a, b| a.pod.cmp(&b.pod));
    summarize(&mut plan, pending.len() + rejected_count);
    plan
}

/// `kerf plan --mode all`: provisioning first, then disruption of the cluster as
/// provisioning would leave it (disruption plans with the pending pods placed first, and its
/// replacements never take the names of provisioning's launches).
pub fn plan_all(snap: &Snapshot, opts: &DisruptOptions) -> Plan {
    let mut plan = provision(snap, &opts.provisioning());
    let taken: Vec<String> = plan.launches.iter().map(|l| l.node_claim.clone()).collect();
    let nominated: Vec<String> = plan.nominations.iter().map(|n| n.node.clone()).collect();
    let d = disruption::disrupt_with(snap, opts, &taken, &nominated);
    plan.disruptions = d.disruptions;
    plan.skipped = d.skipped;
    plan.drifted = d.drifted;
    plan.budgets = d.budgets;
    let pending = plan.summary.pending_pods;
    summarize(&mut plan, pending);
    plan
}

/// The prepared pools for one run: under `MIN_VALUES_POLICY=BestEffort` no claim is refused
/// for `minValues` while pods are packed (Karpenter relaxes them as it adds pods); the
/// options each claim ends with have their `minValues` lowered in `finalize`.
fn pools_for<'a>(prep: &Prepared<'a>, opts: &Options) -> Vec<pools::PoolCtx<'a>> {
    let mut pools = prep.pools.clone();
    if opts.min_values_policy == model::MinValuesPolicy::BestEffort {
        for p in &mut pools {
            p.min_values = false;
        }
    }
    pools
}

/// More pods placed wins; then the cheaper plan (earlier policies win ties).
fn better(a: (usize, f64), b: (usize, f64)) -> bool {
    match a.0.cmp(&b.0) {
        std::cmp::Ordering::Greater => true,
        std::cmp::Ordering::Less => false,
        std::cmp::Ordering::Equal => a.1 < b.1 - 1e-9,
    }
}

/// Fills the plan's summary; `pending` counts the pending pods it was planned for.
fn summarize(plan: &mut Plan, pending: usize) {
    let cost = round6(plan.cost());
    let scheduled =
        plan.launches.iter().map(|l| l.pods.len()).sum::<usize>() + plan.nominations.len();
    let s = &mut plan.summary;
    s.pending_pods = pending;
    s.scheduled_pods = scheduled;
    s.unschedulable_pods = plan.unschedulable.len();
    s.new_node_claims = plan.launches.len();
    s.new_hourly_cost = cost;
    s.disruptions = plan.disruptions.len();
    s.disrupted_node_claims = plan.disruptions.iter().map(|d| d.node_claims.len()).sum();
    s.savings_per_hour = round6(
        plan.disruptions
            .iter()
            .map(|d| d.savings_per_hour)
            .sum::<f64>()
            + 0.0,
    );
}

fn round6(x: f64) -> f64 {
    (x * 1e6).round() / 1e6 + 0.0
}

/// Splits pending pods into those the scheduler handles and those rejected up front.
fn classify(snap: &Snapshot) -> (Vec<usize>, Vec<Unschedulable>) {
    let mut pending = Vec::new();
    let mut rejected = Vec::new();
    for (i, p) in snap.pods.iter().enumerate().filter(|(_, p)| p.is_pending()) {
        match reject_reason(p) {
            Some((kind, reason)) => rejected.push(Unschedulable {
                pod: p.key(),
                reason,
                kind,
            }),
            None => pending.push(i),
        }
    }
    (pending, rejected)
}

fn reject_reason(p: &model::Pod) -> Option<(ReasonKind, String)> {
    if let Some(ds) = &p.daemonset {
        return Some((
            ReasonKind::DaemonSetPod,
            format!("owned by DaemonSet {ds}: placed by the DaemonSet controller, not provisioned"),
        ));
    }
    let opts_out = p.spec.required_terms.first().is_some_and(|t| {
        t.iter()
            .any(|e| e.key == labels::NODEPOOL && e.operator == Operator::DoesNotExist)
    });
    if opts_out {
        return Some((
            ReasonKind::NotManaged,
            "requires karpenter.sh/nodepool DoesNotExist: not managed by Kerf".into(),
        ));
    }
    p.volumes
        .wait
        .as_ref()
        .map(|w| (ReasonKind::VolumeNotReady, w.to_string()))
}

/// Every resource name the snapshot mentions, so vectors line up.
pub(crate) fn resource_index(snap: &Snapshot) -> ResIndex {
    let mut ix = ResIndex::new();
    for p in &snap.pods {
        ix.learn(&p.spec.requests);
    }
    for n in &snap.nodes {
        ix.learn(&n.allocatable);
        ix.learn(&n.capacity);
    }
    for c in &snap.node_claims {
        ix.learn(&c.allocatable);
    }
    for ds in &snap.daemon_sets {
        ix.learn(&ds.pod.requests);
    }
    for np in &snap.node_pools {
        if let Some(l) = &np.limits {
            ix.learn(l);
        }
        if np.max_cost_per_hour.is_some() {
            ix.slot(cost::COST_RESOURCE);
        }
        for it in &np.catalog.instance_types {
            ix.learn(&it.allocatable);
            ix.learn(&it.capacity);
        }
    }
    ix
}
