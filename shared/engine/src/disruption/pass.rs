//! One disruption pass: the candidates, what each is waiting on, the budgets left and the
//! commands planned so far.

use rustc_hash::FxHashSet;

use super::DisruptOptions;
use super::budgets::Ledger;
use super::candidates::{Block, Candidate, Census};
use super::command;
use super::simulate::{Outcome, Packing, Simulator};
use crate::model::Snapshot;
use crate::plan::{Disruption, Launch, Method, Nomination, PoolBudget, SkipKind, Skipped};

#[derive(Debug)]
pub struct Pass<'a> {
    pub snap: &'a Snapshot,
    pub cands: Vec<Candidate<'a>>,
    /// Why each candidate is left alone, as far as the pass knows.
    pub verdicts: Vec<Option<Block>>,
    /// Candidates some command disrupts.
    pub taken: Vec<bool>,
    pub ledger: Ledger,
    pub commands: Vec<Disruption>,
    /// Managed nodes that were never candidates.
    pub skipped: Vec<Skipped>,
    /// NodeClaim names in use (existing ones and the replacements planned).
    pub names: FxHashSet<String>,
    pub opts: DisruptOptions,
    /// Managed nodes already going away (indices into `snap.nodes`).
    going: Vec<usize>,
    /// Built on the first simulation.
    sim: Option<Simulator<'a>>,
    /// Simulations run so far (bounded by `opts.max_simulations`).
    pub simulations: usize,
}

impl<'a> Pass<'a> {
    pub fn new(
        snap: &'a Snapshot,
        census: Census<'a>,
        budgets: &[PoolBudget],
        opts: &DisruptOptions,
    ) -> Self {
        let n = census.candidates.len();
        Pass {
            snap,
            cands: census.candidates,
            verdicts: vec![None; n],
            taken: vec![false; n],
            ledger: Ledger::new(budgets),
            commands: Vec::new(),
            skipped: census.skipped,
            names: snap.node_claims.iter().map(|c| c.name.clone()).collect(),
            opts: opts.clone(),
            going: census.going,
            sim: None,
            simulations: 0,
        }
    }

    /// Nodes already going away and those this pass's commands took so far.
    fn going_names(&self) -> FxHashSet<String> {
        self.going
            .iter()
            .map(|&i| self.snap.nodes[i].name.clone())
            .chain(
                (0..self.cands.len())
                    .filter(|&i| self.taken[i])
                    .map(|i| self.cands[i].node.name.clone()),
            )
            .collect()
    }

    /// Orders candidates by Karpenter's savings ratio, highest first (ties by name).
    pub fn sort_by_savings(&self, order: &mut [usize]) {
        order.sort_by(|&a, &b| {
            let (ca, cb) = (&self.cands[a], &self.cands[b]);
            cb.savings_ratio()
                .total_cmp(&ca.savings_ratio())
                .then(ca.name().cmp(cb.name()))
        });
    }

    /// True while the pass may run another simulation.
    pub fn can_simulate(&self) -> bool {
        self.simulations < self.opts.max_simulations
    }

    /// Simulates removing candidates `idx` (Karpenter's `SimulateScheduling`).
    pub fn simulate(&mut self, idx: &[usize]) -> Outcome {
        self.simulate_packed(idx, Packing::Planned)
    }

    /// [`Pass::simulate`] packing the pods that need new nodes with `packing`.
    pub fn simulate_packed(&mut self, idx: &[usize], packing: Packing) -> Outcome {
        self.simulations += 1;
        // Built once per pass; nodes earlier commands of the pass remove (expiration) are
        // going too.
        let going = self.sim.is_none().then(|| self.going_names());
        let (snap, opts) = (self.snap, &self.opts);
        let sim = self.sim.get_or_insert_with(|| {
            Simulator::new(snap, going.unwrap_or_default(), opts.provisioning())
        });
        let cands: Vec<&Candidate<'_>> = idx.iter().map(|&i| &self.cands[i]).collect();
        sim.run(&cands, &self.names, packing)
    }

    /// True when [`Packing::FewestNodes`] packs as [`Packing::Planned`] does (cost
    /// optimisation is off).
    pub fn packs_fewest_nodes(&self) -> bool {
        !self.opts.optimize_cost
    }

    /// Why candidate `i` may not be disrupted gracefully by `method`: already in a command,
    /// the node's own block, then its pods' (which drift ignores when a termination grace
    /// period bounds the drain).
    pub fn blocked(&self, i: usize, method: Method) -> Option<Block> {
        let c = &self.cands[i];
        if self.taken[i] {
            return Some((SkipKind::Deleting, "another command disrupts it".into()));
        }
        if let Some(b) = &c.node_block {
            return Some(b.clone());
        }
        let bounded = method == Method::Drift && c.drain_is_bounded();
        match &c.pod_block {
            Some(b) if !bounded => Some(b.clone()),
            _ => None,
        }
    }

    /// Records why candidate `i` is left alone (the latest reason wins).
    pub fn note(&mut self, i: usize, block: Block) {
        self.verdicts[i] = Some(block);
    }

    /// Records why candidate `i` is left alone unless an earlier method already said why.
    pub fn note_first(&mut self, i: usize, block: Block) {
        if self.verdicts[i].is_none() {
            self.verdicts[i] = Some(block);
        }
    }

    /// Records a command over candidates `idx`, spending their budgets.
    pub fn commit(
        &mut self,
        method: Method,
        idx: &[usize],
        replacements: Vec<Launch>,
        nominations: Vec<Nomination>,
    ) {
        for l in &replacements {
            self.names.insert(l.node_claim.clone());
        }
        let cands: Vec<&Candidate<'_>> = idx.iter().map(|&i| &self.cands[i]).collect();
        let cmd = command::build(self.snap, method, &cands, replacements, nominations);
        for &i in idx {
            self.taken[i] = true;
            let pool = self.cands[i].pool.name.clone();
            match method.budget_reason() {
                Some(r) => self.ledger.spend(&pool, r),
                None => self.ledger.spend_all(&pool),
            }
        }
        self.commands.push(cmd);
    }

    /// Candidates not yet taken, in candidate (name) order.
    pub fn open(&self) -> impl Iterator<Item = usize> + '_ {
        (0..self.cands.len()).filter(|&i| !self.taken[i])
    }

    /// Budget left for candidate `i`'s pool and `method`.
    pub fn budget_left(&self, i: usize, method: Method) -> u32 {
        match method.budget_reason() {
            Some(r) => self.ledger.left(&self.cands[i].pool.name, r),
            None => u32::MAX,
        }
    }

    /// The reason a budget stops candidate `i`.
    pub fn budget_block(&self, i: usize, method: Method) -> Block {
        let c = &self.cands[i];
        let reason = method.budget_reason().map_or("", |r| r.as_str());
        (
            SkipKind::Budget,
            format!(
                "NodePool {} allows no more {reason} disruptions now",
                c.pool.name
            ),
        )
    }

    /// Every skipped node: the census's and the candidates no command took.
    pub fn into_skipped(mut self) -> Vec<Skipped> {
        for i in 0..self.cands.len() {
            if self.taken[i] {
                continue;
            }
            let block = self.verdicts[i].take().unwrap_or_else(|| {
                (
                    SkipKind::Nothing,
                    "not empty, drifted or expired, and no consolidation move saves money".into(),
                )
            });
            self.skipped.push(self.cands[i].skipped(block));
        }
        self.skipped.sort_by(|a, b| a.node_claim.cmp(&b.node_claim));
        self.skipped
    }
}
