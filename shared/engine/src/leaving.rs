//! The pods of nodes being deleted, which provisioning places again before they are evicted,
//! as Karpenter's provisioner adds "the reschedulable pods of deleting nodes" to its pending
//! pods: a node deleted by hand, expired or interrupted gets its replacement capacity in one
//! launch sized for all its pods, not one launch per pod as the drain evicts them.
//!
//! A node is leaving when it, or its NodeClaim, is being deleted. Its pods placed again are the
//! reschedulable ones (not DaemonSet or mirror pods, not finished) except those that will not
//! leave it: an active `karpenter.sh/do-not-disrupt` pod, and a pod a PodDisruptionBudget
//! never lets go (`maxUnavailable: 0`, `minAvailable: 100%`). They are placed on other nodes'
//! room, on in-flight NodeClaims (a launch made for them earlier) or on new NodeClaims, and
//! no pod lands on a leaving node.

use rustc_hash::FxHashSet;

use crate::model::{Pod, Snapshot};
use crate::pod_rules::{do_not_disrupt, is_reschedulable, matching_pdbs};

/// The leaving nodes and the pods provisioning places again.
#[derive(Debug, Default)]
pub(crate) struct Leaving {
    /// Node names.
    pub nodes: FxHashSet<String>,
    /// Indices into `snap.pods`, in snapshot order.
    pub pods: Vec<usize>,
    /// The same indices, as a set.
    pub moved: FxHashSet<usize>,
}

impl Leaving {
    /// The snapshot's leaving nodes and their pods to place again.
    pub fn of(snap: &Snapshot) -> Self {
        let claimed_away: FxHashSet<&str> = snap
            .node_claims
            .iter()
            .filter(|c| c.deleting)
            .flat_map(|c| [c.node_name.as_deref(), Some(c.provider_id.as_str())])
            .flatten()
            .filter(|s| !s.is_empty())
            .collect();
        let nodes: FxHashSet<String> = snap
            .nodes
            .iter()
            .filter(|n| {
                n.deleting
                    || claimed_away.contains(n.name.as_str())
                    || (!n.provider_id.is_empty() && claimed_away.contains(n.provider_id.as_str()))
            })
            .map(|n| n.name.clone())
            .collect();
        if nodes.is_empty() {
            return Leaving::default();
        }
        let pods: Vec<usize> = snap
            .pods
            .iter()
            .enumerate()
            .filter(|(_, p)| p.node_name.as_ref().is_some_and(|n| nodes.contains(n)))
            .filter(|(_, p)| moves(snap, p))
            .map(|(i, _)| i)
            .collect();
        let moved = pods.iter().copied().collect();
        Leaving { nodes, pods, moved }
    }
}

/// Whether a pod of a leaving node will have to run elsewhere.
fn moves(snap: &Snapshot, p: &Pod) -> bool {
    is_reschedulable(p)
        && do_not_disrupt(p, snap.now).is_none()
        && !matching_pdbs(p, &snap.pdbs).iter().any(|b| b.blocks_all)
}

#[cfg(test)]
#[path = "leaving_tests.rs"]
mod tests;
