//! What a node's pods say about disrupting it, as Karpenter reads them: which pods must be
//! rescheduled, which would be evicted, what evicting them costs, and whether a
//! `do-not-disrupt` annotation or a PodDisruptionBudget forbids it now.

use kerf_labels::{DISRUPTED_TAINT, DO_NOT_DISRUPT, POD_DELETION_COST};

use crate::model::{Effect, OwnerKind, Pdb, Pod, Taint, Timestamp};
use crate::selector;
use crate::taints::tolerates;
use crate::time::parse_duration;

/// Not finished and not being deleted.
pub fn is_active(p: &Pod) -> bool {
    !p.is_terminal() && !p.terminating
}

/// Owned by a DaemonSet (it comes back on every node by itself).
pub fn is_daemon(p: &Pod) -> bool {
    p.daemonset.is_some() || p.owner == OwnerKind::DaemonSet
}

/// A mirror pod: the kubelet owns it, nothing reschedules it.
pub fn is_mirror(p: &Pod) -> bool {
    p.mirror || p.owner == OwnerKind::Node
}

/// A pod that must find a new node when its node goes: active (or a terminating StatefulSet
/// pod, which comes back with the same name), not a DaemonSet or mirror pod.
pub fn is_reschedulable(p: &Pod) -> bool {
    (is_active(p) || (p.terminating && p.owner == OwnerKind::StatefulSet))
        && !is_daemon(p)
        && !is_mirror(p)
}

/// A pod a drain evicts: active, not a mirror pod, and not tolerating the disrupted taint
/// (pods that tolerate it would stay).
pub fn is_evictable(p: &Pod) -> bool {
    let disrupted = Taint {
        key: DISRUPTED_TAINT.to_string(),
        value: String::new(),
        effect: Effect::NoSchedule,
    };
    is_active(p) && !is_mirror(p) && !p.spec.tolerations.iter().any(|t| tolerates(t, &disrupted))
}

/// Karpenter's `EvictionCost`: `1 + deletionCost/2^27 + priority/2^25`, clamped to ±10.
pub fn eviction_cost(p: &Pod) -> f64 {
    let mut cost = 1.0;
    if let Some(d) = p
        .annotations
        .get(POD_DELETION_COST)
        .and_then(|v| v.trim().parse::<f64>().ok())
    {
        cost += d / 2f64.powi(27);
    }
    cost += f64::from(p.priority) / 2f64.powi(25);
    cost.clamp(-10.0, 10.0)
}

/// Until when an active pod's `karpenter.sh/do-not-disrupt` protects its node: `Some(None)`
/// for `"true"` (for ever), `Some(Some(t))` for a duration from its start time that has not
/// run out, `None` when it does not protect (absent, invalid, expired, or the pod is not
/// active).
pub fn do_not_disrupt(p: &Pod, now: Timestamp) -> Option<Option<Timestamp>> {
    if !is_active(p) {
        return None;
    }
    let v = p.annotations.get(DO_NOT_DISRUPT)?;
    if v == "true" {
        return Some(None);
    }
    let d = parse_duration(v).filter(|d| *d > 0)?;
    match p.start_time {
        // Not started yet: the window has not begun.
        None => Some(None),
        Some(start) if now < start + d => Some(Some(start + d)),
        Some(_) => None,
    }
}

/// The PodDisruptionBudgets selecting a pod.
pub fn matching_pdbs<'a>(p: &Pod, pdbs: &'a [Pdb]) -> Vec<&'a Pdb> {
    pdbs.iter()
        .filter(|b| b.namespace == p.namespace)
        .filter(|b| {
            b.selector
                .as_ref()
                .is_some_and(|s| selector::matches(s, &p.labels))
        })
        .collect()
}

/// Why evicting `p` would violate its PodDisruptionBudget now (`None` when it may go):
/// more than one budget selects it, or the one that does allows no disruption (unless the
/// pod is not Ready and the budget always allows evicting unhealthy pods).
pub fn pdb_block(p: &Pod, pdbs: &[Pdb]) -> Option<String> {
    let m = matching_pdbs(p, pdbs);
    match m.as_slice() {
        [] => None,
        [b] if b.disruptions_allowed > 0 || (b.unhealthy_always_allow && !p.ready) => None,
        [b] => Some(format!(
            "PodDisruptionBudget {}/{} allows no disruption of pod {} now",
            b.namespace,
            b.name,
            p.key()
        )),
        many => Some(format!(
            "pod {} is selected by more than one PodDisruptionBudget ({})",
            p.key(),
            many.iter()
                .map(|b| b.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        )),
    }
}

#[cfg(test)]
#[path = "pod_rules_tests.rs"]
mod tests;
