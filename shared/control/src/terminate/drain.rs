//! Draining a node, as Karpenter's terminator does: the pods waiting for eviction are the
//! non-terminal ones that do not tolerate `karpenter.sh/disrupted`, are not mirror pods and
//! are not stuck terminating; they are evicted through the Eviction API one tier at a time
//! (non-critical, non-critical DaemonSet, critical, critical DaemonSet). A PodDisruptionBudget
//! that refuses (429) leaves the pod for the next pass; so does an active do-not-disrupt.
//! Past the termination grace period's deadline, pods are deleted outright (PDBs and
//! do-not-disrupt no longer hold) with what is left of the grace period.

use jiff::{SignedDuration, Timestamp};
use k8s_openapi::api::core::v1::Pod;

use crate::ports::{Cluster, ClusterError, Evicted};

/// Pods stuck terminating this long are no longer waited for.
pub const STUCK_TERMINATING: SignedDuration = SignedDuration::from_mins(1);

/// What one drain pass left.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct DrainPass {
    /// Pods still on the node that must go before it is drained.
    pub waiting: usize,
    pub evicted: Vec<String>,
    /// Pods a PodDisruptionBudget kept (with the server's message).
    pub blocked: Vec<(String, String)>,
    /// Pods held by an active do-not-disrupt.
    pub protected: Vec<String>,
    /// Pods deleted because the grace period ran out.
    pub forced: Vec<String>,
}

impl DrainPass {
    pub fn drained(&self) -> bool {
        self.waiting == 0
    }
}

fn key(p: &Pod) -> String {
    format!(
        "{}/{}",
        p.metadata.namespace.as_deref().unwrap_or_default(),
        p.metadata.name.as_deref().unwrap_or_default()
    )
}

fn owned_by_daemonset(p: &Pod) -> bool {
    p.metadata
        .owner_references
        .iter()
        .flatten()
        .any(|o| o.kind == "DaemonSet")
}

fn critical(p: &Pod) -> bool {
    let class = p
        .spec
        .as_ref()
        .and_then(|s| s.priority_class_name.as_deref());
    matches!(
        class,
        Some("system-cluster-critical" | "system-node-critical")
    )
}

fn tolerates_disrupted(p: &Pod) -> bool {
    p.spec
        .as_ref()
        .and_then(|s| s.tolerations.as_ref())
        .is_some_and(|ts| {
            ts.iter().any(|t| {
                let key_ok = t
                    .key
                    .as_deref()
                    .is_none_or(|k| k.is_empty() || k == kerf_labels::DISRUPTED_TAINT);
                let effect_ok = t
                    .effect
                    .as_deref()
                    .is_none_or(|e| e.is_empty() || e == "NoSchedule");
                key_ok && effect_ok && (t.operator.as_deref() == Some("Exists") || t.key.is_some())
            })
        })
}

fn terminal(p: &Pod) -> bool {
    matches!(
        p.status.as_ref().and_then(|s| s.phase.as_deref()),
        Some("Succeeded" | "Failed")
    )
}

fn mirror(p: &Pod) -> bool {
    p.metadata
        .annotations
        .as_ref()
        .is_some_and(|a| a.contains_key(kerf_labels::MIRROR_POD))
}

/// Whether a pod's do-not-disrupt annotation protects it at `now` (`"true"`, or a duration
/// measured from its start time).
pub fn do_not_disrupt(p: &Pod, now: Timestamp) -> bool {
    let Some(v) = p
        .metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(kerf_labels::DO_NOT_DISRUPT))
    else {
        return false;
    };
    if v == "true" {
        return true;
    }
    let Ok(d) = v.parse::<jiff::Span>().and_then(SignedDuration::try_from) else {
        return false;
    };
    let start = p
        .status
        .as_ref()
        .and_then(|s| s.start_time.as_ref())
        .map(|t| t.0);
    start.is_some_and(|s| now < s + d)
}

/// Whether a pod is stuck terminating at `now` (past [`STUCK_TERMINATING`]).
fn stuck_terminating(p: &Pod, now: Timestamp) -> bool {
    p.metadata
        .deletion_timestamp
        .as_ref()
        .is_some_and(|t| now >= t.0 + STUCK_TERMINATING)
}

/// Whether the drain evicts this pod (Karpenter's `IsDrainable`): it does not tolerate
/// `karpenter.sh/disrupted`, is not stuck terminating and is not a mirror pod.
pub fn drainable(p: &Pod, now: Timestamp) -> bool {
    !tolerates_disrupted(p) && !stuck_terminating(p, now) && !mirror(p)
}

/// The pods that must leave before the node is drained.
pub fn waiting(pods: &[Pod], now: Timestamp) -> Vec<&Pod> {
    pods.iter()
        .filter(|p| !terminal(p) && drainable(p, now))
        .collect()
}

/// The first non-empty eviction tier among `pods` (not yet terminating).
pub fn first_tier<'a>(pods: &[&'a Pod]) -> Vec<&'a Pod> {
    let live: Vec<&Pod> = pods
        .iter()
        .copied()
        .filter(|p| p.metadata.deletion_timestamp.is_none())
        .collect();
    for (crit, ds) in [(false, false), (false, true), (true, false), (true, true)] {
        let tier: Vec<&Pod> = live
            .iter()
            .copied()
            .filter(|p| critical(p) == crit && owned_by_daemonset(p) == ds)
            .collect();
        if !tier.is_empty() {
            return tier;
        }
    }
    Vec::new()
}

/// The next moment a waiting pod is due to be deleted outright (`deadline` minus its grace
/// period), after `now`: when the next drain pass must come, not a poll later.
pub fn next_force(pods: &[Pod], deadline: Option<Timestamp>, now: Timestamp) -> Option<Timestamp> {
    let d = deadline?;
    waiting(pods, now)
        .iter()
        .map(|p| d - SignedDuration::from_secs(grace_of(p)))
        .filter(|t| *t > now)
        .min()
}

/// A pod's termination grace period in seconds (Kubernetes' default 30).
fn grace_of(p: &Pod) -> i64 {
    p.spec
        .as_ref()
        .and_then(|s| s.termination_grace_period_seconds)
        .unwrap_or(30)
}

/// One drain pass over the pods of a node.
pub async fn pass<C: Cluster>(
    cluster: &C,
    pods: &[Pod],
    deadline: Option<Timestamp>,
    now: Timestamp,
) -> Result<DrainPass, ClusterError> {
    let waiting = waiting(pods, now);
    let mut out = DrainPass {
        waiting: waiting.len(),
        ..DrainPass::default()
    };
    for p in &waiting {
        let grace = grace_of(p);
        if let Some(d) = deadline
            && now + SignedDuration::from_secs(grace) > d
        {
            let left = d.duration_since(now).as_secs().max(1);
            let uid = p.metadata.uid.as_deref();
            cluster
                .delete_pod(
                    p.metadata.namespace.as_deref().unwrap_or_default(),
                    p.metadata.name.as_deref().unwrap_or_default(),
                    uid,
                    Some(left),
                )
                .await?;
            out.forced.push(key(p));
        }
    }
    if !out.forced.is_empty() {
        return Ok(out);
    }
    for p in first_tier(&waiting) {
        if do_not_disrupt(p, now) {
            out.protected.push(key(p));
            continue;
        }
        let ns = p.metadata.namespace.as_deref().unwrap_or_default();
        let name = p.metadata.name.as_deref().unwrap_or_default();
        match cluster.evict_pod(ns, name, p.metadata.uid.as_deref()).await {
            Ok(Evicted::Evicted) | Ok(Evicted::AlreadyGone) => out.evicted.push(key(p)),
            Err(ClusterError::Blocked { message, .. }) => out.blocked.push((key(p), message)),
            Err(e) => return Err(e),
        }
    }
    Ok(out)
}

#[cfg(test)]
#[path = "drain_tests.rs"]
mod tests;
