//! Scheduling simulations for disruption (Karpenter's `SimulateScheduling`): the cluster
//! without some candidates, their reschedulable pods placed by the provisioning scheduler on
//! what remains (existing nodes, in-flight NodeClaims, new NodeClaims), beside the pending
//! pods and the pods of nodes already going away, which compete for the same room.
//!
//! The snapshot is never copied: a simulation sees it through an overlay (nodes gone, pods
//! moved), and what every simulation shares (resource index, pools, pending pods) is
//! prepared once per pass.

use rustc_hash::FxHashSet;

use super::candidates::Candidate;
use super::pods::is_reschedulable;
use crate::model::{Options, Snapshot};
use crate::plan::{Launch, Nomination, Plan};
use crate::provisioning::{Prepared, plan_prepared};
use crate::view::Overlay;

/// Where the moved pods of one simulation would go.
#[derive(Clone, Debug, Default)]
pub struct Outcome {
    /// New NodeClaims that hold at least one moved pod.
    pub launches: Vec<Launch>,
    /// Moved pods that land on existing nodes or in-flight claims.
    pub nominations: Vec<Nomination>,
    /// The moved pods that fit nowhere, with the scheduler's reasons (sorted by pod).
    pub unplaced: Vec<(String, String)>,
}

/// How a simulation packs the pods that need new nodes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Packing {
    /// As provisioning plans them (with cost optimisation on, the cheapest new nodes, however
    /// many).
    Planned,
    /// Karpenter's packing: first fit onto existing room, then onto as few new nodes as the
    /// largest instance types allow, each taking its cheapest fitting option.
    FewestNodes,
}

/// The simulations of one disruption pass.
pub struct Simulator<'a> {
    snap: &'a Snapshot,
    prep: Prepared<'a>,
    /// Nodes going away before any candidate (already deleting, or removed by an earlier
    /// command of the pass).
    going: FxHashSet<String>,
    /// Their reschedulable pods, which every simulation places again.
    going_pods: Vec<usize>,
    /// Nodes a moved pod may land on: unmanaged ones, and managed ones once initialized
    /// (Karpenter's `UninitializedNodeError`: pods must not wait on a node still booting).
    ready: FxHashSet<String>,
    /// Nodes and in-flight NodeClaims no moved pod may land on, whose own pods stay put.
    closed: FxHashSet<String>,
    opts: Options,
}

impl std::fmt::Debug for Simulator<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Simulator")
            .field("going", &self.going)
            .field("going_pods", &self.going_pods.len())
            .finish()
    }
}

impl<'a> Simulator<'a> {
    /// `going`: the names of nodes already going away (or deleted by an earlier command of
    /// the pass), which no pod may land on and whose reschedulable pods every simulation
    /// must place too.
    pub fn new(snap: &'a Snapshot, going: FxHashSet<String>, opts: Options) -> Self {
        let going_pods = snap
            .pods
            .iter()
            .enumerate()
            .filter(|(_, p)| {
                p.node_name.as_deref().is_some_and(|n| going.contains(n)) && is_reschedulable(p)
            })
            .map(|(i, _)| i)
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
        let mut sim = Simulator {
            snap,
            prep: Prepared::for_many_runs(snap),
            going,
            going_pods,
            ready,
            closed: FxHashSet::default(),
            opts,
        };
        sim.drop_hopeless();
        sim
    }

    /// For an evacuation whose pods would wait on capacity still booting: that capacity
    /// (uninitialized nodes, in-flight NodeClaims) is closed to moved pods, and pending pods
    /// are left out (they wait for that capacity already), so the moved pods get new
    /// capacity of their own.
    pub fn closing_booting(mut self) -> Self {
        let snap = self.snap;
        let nodes: FxHashSet<&str> = snap.nodes.iter().map(|n| n.name.as_str()).collect();
        let booting_nodes = snap
            .nodes
            .iter()
            .filter(|n| !self.ready.contains(&n.name))
            .map(|n| n.name.clone());
        let in_flight = snap
            .node_claims
            .iter()
            .filter(|c| c.node_name.as_deref().is_none_or(|n| !nodes.contains(n)))
            .map(|c| c.name.clone());
        self.closed = booting_nodes.chain(in_flight).collect();
        self.prep.pending.clear();
        self
    }

    /// Pending pods and pods of going nodes that fit nowhere with every candidate still in
    /// place are left out of the simulations: removing nodes frees no room, and their
    /// outcome decides nothing (only the candidates' pods must fit). Without this, every
    /// simulation would search the whole cluster again for each of them. (A removed node
    /// can relax an anti-affinity or spread constraint of such a pod; it then competes for
    /// room in Kerf's simulations no more than it did before.)
    fn drop_hopeless(&mut self) {
        let plan = self.plan_removing(&[], &[], &FxHashSet::default(), Packing::Planned);
        let hopeless: FxHashSet<&str> = plan.unschedulable.iter().map(|u| u.pod.as_str()).collect();
        if hopeless.is_empty() {
            return;
        }
        let snap = self.snap;
        let keep = |i: &usize| !hopeless.contains(snap.pods[*i].key().as_str());
        self.prep.pending.retain(keep);
        self.going_pods.retain(keep);
    }

    /// The provisioning plan with `nodes` and the going nodes removed and their pods
    /// (`movable`, the going pods) placed again beside the pending pods.
    fn plan_removing(
        &self,
        nodes: &[&str],
        movable: &[usize],
        taken: &FxHashSet<String>,
        packing: Packing,
    ) -> Plan {
        let mut gone = self.going.clone();
        gone.extend(nodes.iter().map(|n| n.to_string()));
        gone.extend(self.closed.iter().cloned());
        let mut moved_list = self.going_pods.clone();
        moved_list.extend(
            movable
                .iter()
                .copied()
                .filter(|i| !self.going_pods.contains(i)),
        );
        let moved: FxHashSet<usize> = moved_list.iter().copied().collect();
        let overlay = Overlay {
            gone: Some(&gone),
            moved: Some(&moved),
            cached: None,
        };
        let opts = match packing {
            Packing::Planned => self.opts.clone(),
            Packing::FewestNodes => Options {
                optimize_cost: false,
                ..self.opts.clone()
            },
        };
        plan_prepared(self.snap, &self.prep, &moved_list, overlay, &opts, taken)
    }

    /// Simulates removing `cands`, packing with `packing`; new NodeClaims are named apart
    /// from `taken`.
    pub fn run(
        &self,
        cands: &[&Candidate<'_>],
        taken: &FxHashSet<String>,
        packing: Packing,
    ) -> Outcome {
        let nodes: Vec<&str> = cands.iter().map(|c| c.node.name.as_str()).collect();
        let movable: Vec<usize> = cands
            .iter()
            .flat_map(|c| c.movable.iter().copied())
            .collect();
        self.outcome(&nodes, &movable, taken, packing)
    }

    /// Simulates removing `nodes`, whose pods `movable` must be placed again.
    pub fn run_nodes(
        &self,
        nodes: &[&str],
        movable: &[usize],
        taken: &FxHashSet<String>,
    ) -> Outcome {
        self.outcome(nodes, movable, taken, Packing::Planned)
    }

    fn outcome(
        &self,
        nodes: &[&str],
        movable: &[usize],
        taken: &FxHashSet<String>,
        packing: Packing,
    ) -> Outcome {
        let plan = self.plan_removing(nodes, movable, taken, packing);
        let keys: FxHashSet<String> = movable.iter().map(|&i| self.snap.pods[i].key()).collect();
        let waiting: Vec<(String, String)> = plan
            .nominations
            .iter()
            .filter(|n| keys.contains(&n.pod) && !self.ready.contains(&n.node))
            .map(|n| {
                let why = format!("it would wait for {}, which is not initialized yet", n.node);
                (n.pod.clone(), why)
            })
            .collect();
        Outcome {
            unplaced: plan
                .unschedulable
                .iter()
                .filter(|u| keys.contains(&u.pod))
                .map(|u| (u.pod.clone(), u.reason.clone()))
                .chain(waiting)
                .collect(),
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
