//! Provisioning: plans capacity for a snapshot's pending pods (and the pods of nodes being
//! deleted), comparing packing policies and repacking for cost.

use rustc_hash::FxHashSet;

use crate::cost;
use crate::finalize;
use crate::index::resource_index;
use crate::labels;
use crate::leaving;
use crate::model::{self, Options, Snapshot};
use crate::open::Policy;
use crate::plan::{Plan, ReasonKind, Unschedulable};
use crate::pools;
use crate::prepare;
use crate::repack;
use crate::requirements::Operator;
use crate::res::ResIndex;
use crate::scheduler::Run;
use crate::summary::summarize;
use crate::view::{Cached, Overlay};

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
    pub(crate) ix: ResIndex,
    pools: Vec<pools::PoolCtx<'a>>,
    pub(crate) pending: Vec<usize>,
    rejected: Vec<Unschedulable>,
    /// Node slots and namespaces, for callers that plan the same snapshot many times.
    cached: Option<Cached>,
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
        p.cached = Some(prepare::cached(snap, &p.ix));
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

/// The prepared pools for one run: under `MIN_VALUES_POLICY=BestEffort` no claim is refused
/// for `minValues` while pods are packed (Karpenter relaxes them as it adds pods); the
/// options each claim ends with have their `minValues` lowered in `finalize`.
pub(crate) fn pools_for<'a>(prep: &Prepared<'a>, opts: &Options) -> Vec<pools::PoolCtx<'a>> {
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
