//! Evacuation: the capacity that replaces NodeClaims that must go now whatever budgets,
//! PodDisruptionBudgets and do-not-disrupt say — a spot interruption warning, a scheduled
//! maintenance, an instance stopping. Their reschedulable pods are placed, by the same
//! simulation consolidation and drift use, on the nodes that stay (not on those already going
//! away or not yet initialized) and on new NodeClaims, beside the pending pods. Pods that
//! would wait on capacity still booting get new capacity of their own instead (in a burst of
//! interruptions, the previous replacements are spoken for). An offering AWS is reclaiming is
//! left out by marking it unavailable in the catalog first.

use rustc_hash::FxHashSet;

use super::DisruptOptions;
use super::candidates::census;
use super::pods::is_reschedulable;
use super::simulate::Simulator;
use crate::model::Snapshot;
use crate::plan::{Plan, ReasonKind, Unschedulable};
use crate::summary::summarize;

/// Plans replacements for `node_claims` (names; unknown ones and those without a node are
/// ignored): `launches` hold their pods that need new capacity, `nominations` those that fit
/// on existing nodes, `unschedulable` those that fit nowhere.
pub fn evacuate(snap: &Snapshot, node_claims: &[String], opts: &DisruptOptions) -> Plan {
    let wanted: FxHashSet<&str> = node_claims.iter().map(String::as_str).collect();
    let nodes: Vec<&str> = snap
        .node_claims
        .iter()
        .filter(|c| wanted.contains(c.name.as_str()))
        .filter_map(|c| c.node_name.as_deref())
        .filter(|n| snap.nodes.iter().any(|x| x.name == *n))
        .collect();
    let on: FxHashSet<&str> = nodes.iter().copied().collect();
    let movable: Vec<usize> = snap
        .pods
        .iter()
        .enumerate()
        .filter(|(_, p)| p.node_name.as_deref().is_some_and(|n| on.contains(n)))
        .filter(|(_, p)| is_reschedulable(p))
        .map(|(i, _)| i)
        .collect();
    let going: FxHashSet<String> = census(snap)
        .going
        .iter()
        .map(|&i| snap.nodes[i].name.clone())
        .filter(|n| !on.contains(n.as_str()))
        .collect();
    let taken: FxHashSet<String> = snap.node_claims.iter().map(|c| c.name.clone()).collect();
    let mut plan = Plan::new();
    if !movable.is_empty() {
        let sim = Simulator::new(snap, going.clone(), opts.provisioning());
        let mut out = sim.run_nodes(&nodes, &movable, &taken);
        if !out.unplaced.is_empty() {
            // Pods that would wait on booting capacity (or fit nowhere beside the pending
            // pods) get capacity of their own: the node they are on is going now.
            let sim = Simulator::new(snap, going, opts.provisioning()).closing_booting();
            out = sim.run_nodes(&nodes, &movable, &taken);
        }
        plan.launches = out.launches;
        plan.nominations = out.nominations;
        plan.unschedulable = out
            .unplaced
            .into_iter()
            .map(|(pod, reason)| Unschedulable {
                pod,
                reason,
                kind: ReasonKind::NoNodePoolFits,
            })
            .collect();
    }
    plan.nominations.sort_by(|a, b| a.pod.cmp(&b.pod));
    plan.unschedulable.sort_by(|a, b| a.pod.cmp(&b.pod));
    summarize(&mut plan, movable.len());
    plan
}
