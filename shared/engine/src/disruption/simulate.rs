//! Scheduling simulations for disruption (Karpenter's `SimulateScheduling`): the cluster
//! without some candidates, their reschedulable pods placed by the provisioning scheduler on
//! what remains (existing nodes, in-flight NodeClaims, new NodeClaims), beside the pending
//! pods and the pods of nodes already going away, which compete for the same room.

use rustc_hash::{FxHashMap, FxHashSet};

use super::candidates::Candidate;
use super::pods::is_reschedulable;
use crate::model::{Options, Snapshot};
use crate::plan::{Launch, Nomination};

/// Where the moved pods of one simulation would go.
#[derive(Clone, Debug, Default)]
pub struct Outcome {
    /// New NodeClaims that hold at least one moved pod.
    pub launches: Vec<Launch>,
    /// Moved pods that land on existing nodes or in-flight claims.
    pub nominations: Vec<Nomination>,
    /// The first moved pod that fits nowhere, with the scheduler's reason.
    pub unplaced: Option<(String, String)>,
}

/// A working copy of the snapshot that simulations edit and restore in place, so a pass
/// pays for one copy however many simulations it runs.
#[derive(Debug)]
pub struct Simulator {
    work: Snapshot,
    node_index: FxHashMap<String, usize>,
    /// Nodes a moved pod may land on: unmanaged ones, and managed ones once initialized
    /// (Karpenter's `UninitializedNodeError`: pods must not wait on a node still booting).
    ready: FxHashSet<String>,
    opts: Options,
}

impl Simulator {
    /// `going`: the names of nodes already going away (or deleted by an earlier command of
    /// the pass), which no pod may land on and whose reschedulable pods every simulation
    /// must place too.
    pub fn new(snap: &Snapshot, going: &FxHashSet<String>, opts: Options) -> Self {
        let mut work = snap.clone();
        for n in work.nodes.iter_mut().filter(|n| going.contains(&n.name)) {
            n.deleting = true;
        }
        let gone = going;
        for p in work.pods.iter_mut() {
            if p.node_name.as_deref().is_some_and(|n| gone.contains(n)) && is_reschedulable(p) {
                p.node_name = None;
                p.phase = "Pending".into();
                p.terminating = false;
            }
        }
        let node_index = snap
            .nodes
            .iter()
            .enumerate()
            .map(|(i, n)| (n.name.clone(), i))
            .collect();
        let ready = snap
            .nodes
            .iter()
            .filter(|n| {
                !n.labels.contains_key(kerf_labels::NODEPOOL)
                    || n.labels
                        .get(kerf_labels::INITIALIZED)
                        .is_some_and(|v| v == "true")
            })
            .map(|n| n.name.clone())
            .collect();
        Simulator {
            work,
            node_index,
            ready,
            opts,
        }
    }

    /// Simulates removing `cands`; new NodeClaims are named apart from `taken`.
    pub fn run(&mut self, cands: &[&Candidate<'_>], taken: &FxHashSet<String>) -> Outcome {
        let mut nodes = Vec::new();
        let mut moved: Vec<(usize, Option<String>, String, bool)> = Vec::new();
        for c in cands {
            if let Some(&ni) = self.node_index.get(&c.node.name) {
                nodes.push((ni, self.work.nodes[ni].deleting));
                self.work.nodes[ni].deleting = true;
            }
            for &pi in &c.movable {
                let p = &mut self.work.pods[pi];
                let phase = std::mem::replace(&mut p.phase, "Pending".into());
                moved.push((pi, p.node_name.take(), phase, p.terminating));
                p.terminating = false;
            }
        }
        let plan = crate::provision_with(&self.work, &self.opts, taken);
        let keys: FxHashSet<String> = moved
            .iter()
            .map(|(pi, ..)| self.work.pods[*pi].key())
            .collect();
        for (ni, deleting) in nodes {
            self.work.nodes[ni].deleting = deleting;
        }
        for (pi, node, phase, terminating) in moved {
            let p = &mut self.work.pods[pi];
            p.node_name = node;
            p.phase = phase;
            p.terminating = terminating;
        }
        let waiting = plan
            .nominations
            .iter()
            .find(|n| keys.contains(&n.pod) && !self.ready.contains(&n.node))
            .map(|n| {
                let why = format!("it would wait for {}, which is not initialized yet", n.node);
                (n.pod.clone(), why)
            });
        Outcome {
            unplaced: plan
                .unschedulable
                .iter()
                .find(|u| keys.contains(&u.pod))
                .map(|u| (u.pod.clone(), u.reason.clone()))
                .or(waiting),
            nominations: plan
                .nominations
                .into_iter()
                .filter(|n| keys.contains(&n.pod))
                .collect(),
            launches: plan
                .launches
                .into_iter()
                .filter(|l| l.pods.iter().any(|p| keys.contains(p)))
                .collect(),
        }
    }
}
