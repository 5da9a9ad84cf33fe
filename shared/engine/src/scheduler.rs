//! The provisioning loop: pods in queue order go to existing nodes, then in-flight claims, then
//! new claims; failures relax preferences and are retried until a pass makes no progress.

use rustc_hash::FxHashMap;

use crate::fit::{self, Attempt};
use crate::open::{self, Policy};
use crate::plan::ReasonKind;
use crate::podreqs::{Relaxation, node_requirements, strict_requirements};
use crate::pools::PoolCtx;
use crate::prepare::{Base, PodInfo};
use crate::reserve::Budget;
use crate::slots::Slot;
use crate::topology::Topology;

/// The state of one packing run.
#[derive(Debug)]
pub struct Run<'a> {
    pub pods: Vec<PodInfo<'a>>,
    pub topo: Topology,
    pub slots: Vec<Slot>,
    pub pools: Vec<PoolCtx<'a>>,
    /// Slots that existed before this run (nodes and in-flight claims).
    pub existing: usize,
    /// Where each pod went (index into `slots`).
    pub placed: Vec<Option<usize>>,
    /// Why each pod that is not placed failed, as of its last attempt.
    pub reasons: Vec<(ReasonKind, String)>,
    policy: Policy,
    respect: bool,
    demand: crate::res::Res,
    /// First-fit hints: shape → first slot worth trying.
    hints: FxHashMap<(u64, Relaxation), usize>,
    /// Class → how many leading slots refuse its pods for good.
    frontier: FxHashMap<(u64, Relaxation), usize>,
    /// Capacity reservations' instances not yet held by a new claim.
    budget: Budget,
    /// Tests scan every slot from the first, to show that skipping changes nothing.
    #[cfg(test)]
    pub(crate) full_scan: bool,
}

impl<'a> Run<'a> {
    pub fn new(base: Base<'a>, policy: Policy, respect: bool) -> Self {
        let n = base.pods.len();
        let existing = base.slots.len();
        let budget = Budget::of(&base.pools);
        Run {
            pods: base.pods,
            topo: base.topo,
            slots: base.slots,
            pools: base.pools,
            existing,
            placed: vec![None; n],
            reasons: vec![(ReasonKind::NoNodePoolFits, String::new()); n],
            policy,
            respect,
            demand: base.demand,
            hints: FxHashMap::default(),
            frontier: FxHashMap::default(),
            budget,
            #[cfg(test)]
            full_scan: false,
        }
    }

    /// Schedules every pod, retrying failures while the previous pass placed something.
    pub fn solve(&mut self) {
        let mut queue: Vec<usize> = (0..self.pods.len()).collect();
        loop {
            let mut failed = Vec::new();
            let mut progress = false;
            for i in queue {
                if self.place(i) {
                    progress = true;
                } else {
                    failed.push(i);
                }
            }
            if failed.is_empty() || !progress {
                break;
            }
            queue = failed;
        }
    }

    /// Places pod `i`, relaxing preferences on failure.
    fn place(&mut self, i: usize) -> bool {
        let prefer_taints = self.pools.iter().any(|p| {
            p.np.taints
                .iter()
                .any(|t| t.effect == crate::model::Effect::PreferNoSchedule)
        });
        let mut relax = Relaxation::default();
        loop {
            match self.attempt(i, relax) {
                Ok(slot) => {
                    self.placed[i] = Some(slot);
                    return true;
                }
                Err(reason) => {
                    self.reasons[i] = reason;
                    if !relax.relax(&self.pods[i].pod.spec, self.respect, prefer_taints) {
                        return false;
                    }
                }
            }
        }
    }

    fn attempt(&mut self, i: usize, relax: Relaxation) -> Result<usize, (ReasonKind, String)> {
        let p = &self.pods[i];
        let spec = &p.pod.spec;
        if let Some(w) = &p.pod.volumes.wait {
            return Err((ReasonKind::VolumeNotReady, w.to_string()));
        }
        let invalid = |e| {
            (
                ReasonKind::InvalidNodeAffinity,
                format!("invalid node affinity: {e}"),
            )
        };
        let a = Attempt {
            reqs: node_requirements(spec, &relax, self.respect).map_err(invalid)?,
            strict: strict_requirements(spec, &relax).map_err(invalid)?,
            tolerations: &spec.tolerations,
            tolerate_prefer: relax.tolerate_prefer_no_schedule,
            active: active_groups(p, &relax, self.respect),
        };
        // A pod without volume topology makes one attempt; one with it, one per combination
        // of its claims' alternatives (the volumes narrow the node, never `strict`).
        let with_volumes;
        let attempts: &[Attempt<'_>] = if p.pod.volumes.topology.is_empty() {
            std::slice::from_ref(&a)
        } else {
            with_volumes = volume_attempts(&a, &p.pod.volumes)?;
            &with_volumes
        };
        // Topology refusals that last let the class frontier pass a slot; the shape hint also
        // trusts a hostname affinity (its pods follow the first one's node).
        let lasting = |g: usize| self.topo.refusal_lasts(g);
        let topology_lasts = a.active.iter().all(|&(g, _)| lasting(g));
        let monotone = a
            .active
            .iter()
            .all(|&(g, _)| lasting(g) || self.topo.groups[g].is_hostname());
        let key = (p.shape, relax);
        let scan = self.scan(i, attempts, relax, monotone, topology_lasts);
        if let Some(f) = scan.frontier {
            self.frontier.insert((p.class, relax), f);
        }
        if let Some((s, a, f)) = scan.found {
            if monotone {
                self.hints.insert(key, s);
            }
            let a = &attempts[a];
            fit::commit(
                i,
                &self.pods,
                a,
                f,
                &mut self.slots[s],
                &mut self.topo,
                &self.pools,
            );
            return Ok(s);
        }
        let (slot, a) = self.open_first(p, attempts)?;
        let s = self.slots.len();
        if let Some(id) = &slot.reservation {
            self.budget.take(id);
        }
        self.slots.push(slot);
        if let crate::slots::SlotKind::Bin { pool, target } = self.slots[s].kind {
            let cap = self.pools[pool].types[target].capacity.clone();
            self.pools[pool].charge(&cap);
        }
        if monotone {
            self.hints.insert(key, s);
        }
        let f = fit::check(&self.pods[i], a, &self.slots[s], &self.topo, &self.pools).ok_or_else(
            || {
                (
                    ReasonKind::NoNodePoolFits,
                    "the new node claim rejected its first pod".to_string(),
                )
            },
        )?;
        fit::commit(
            i,
            &self.pods,
            a,
            f,
            &mut self.slots[s],
            &mut self.topo,
            &self.pools,
        );
        Ok(s)
    }
}

impl<'a> Run<'a> {
    /// The first slot that takes pod `i` under one of `attempts` (slot, attempt, fit), and the
    /// class frontier this scan reached.
    ///
    /// The scan starts past the slots known to refuse the pod: for a `monotone` pod, where its
    /// shape last fitted; for any pod, its class's frontier, the leading slots that refuse
    /// every pod of the class for good ([`fit::refused_for_good`]), which the scan extends.
    /// Skipped slots would refuse the pod anyway, so it lands where a scan from the first slot
    /// would put it.
    fn scan(
        &self,
        i: usize,
        attempts: &[Attempt<'_>],
        relax: Relaxation,
        monotone: bool,
        topology_lasts: bool,
    ) -> Scan {
        let p = &self.pods[i];
        // With volume alternatives, a slot one alternative refuses may take another.
        let single = attempts.len() == 1;
        let mut frontier = match single {
            true => self.frontier.get(&(p.class, relax)).copied().unwrap_or(0),
            false => 0,
        };
        let hint = match monotone {
            true => self.hints.get(&(p.shape, relax)).copied().unwrap_or(0),
            false => 0,
        };
        let start = hint.max(frontier);
        #[cfg(test)]
        let start = if self.full_scan { 0 } else { start };
        let mut found = None;
        for s in start..self.slots.len() {
            let slot = &self.slots[s];
            found = attempts.iter().enumerate().find_map(|(k, a)| {
                fit::check(p, a, slot, &self.topo, &self.pools).map(|f| (s, k, f))
            });
            if found.is_some() {
                break;
            }
            if single
                && s == frontier
                && fit::refused_for_good(
                    p,
                    &attempts[0],
                    slot,
                    &self.topo,
                    &self.pools,
                    topology_lasts,
                )
            {
                frontier = s + 1;
            }
        }
        Scan {
            found,
            frontier: single.then_some(frontier),
        }
    }

    /// A new claim for the first attempt some pool accepts, or the reason the first attempt
    /// failed (named with the volumes when the pod has volume topology).
    fn open_first<'t>(
        &self,
        p: &PodInfo<'_>,
        attempts: &'t [Attempt<'t>],
    ) -> Result<(Slot, &'t Attempt<'t>), (ReasonKind, String)> {
        let kind = if self.pools.is_empty() {
            ReasonKind::NoNodePools
        } else {
            ReasonKind::NoNodePoolFits
        };
        let mut first = None;
        for a in attempts {
            match open::open(
                p,
                a,
                &self.pools,
                &self.topo,
                self.policy,
                &self.demand,
                &self.budget,
            ) {
                Ok(slot) => return Ok((slot, a)),
                Err(m) => {
                    first.get_or_insert_with(|| m.to_string());
                }
            }
        }
        let claims: Vec<&str> = p
            .pod
            .volumes
            .topology
            .iter()
            .map(|t| t.claim.as_str())
            .collect();
        Err(match (first, claims.is_empty()) {
            (Some(m), true) => (kind, m),
            (Some(m), false) => (
                kind,
                format!("with the volume topology of {}: {m}", claims.join(", ")),
            ),
            (None, _) => (
                ReasonKind::NoNodePoolFits,
                format!(
                    "the volume topologies of {} admit no node together",
                    claims.join(", ")
                ),
            ),
        })
    }
}

/// What [`Run::scan`] found.
struct Scan {
    found: Option<(usize, usize, fit::Fit)>,
    frontier: Option<usize>,
}

/// One attempt per combination of the pod's volume alternatives: the attempt's node
/// requirements narrowed by it.
fn volume_attempts<'p>(
    a: &Attempt<'p>,
    v: &crate::model::PodVolumes,
) -> Result<Vec<Attempt<'p>>, (ReasonKind, String)> {
    let combos = crate::volumes::combinations(v).map_err(|e| {
        (
            ReasonKind::InvalidNodeAffinity,
            format!("invalid volume node affinity: {e}"),
        )
    })?;
    Ok(combos
        .into_iter()
        .filter(|c| a.reqs.is_compatible(c))
        .map(|c| {
            let mut b = a.clone();
            b.reqs.add_all(&c);
            b
        })
        .collect())
}

/// Constraint groups in force at this relaxation level, flagged when the pod owns them as
/// required anti-affinity.
fn active_groups(p: &PodInfo<'_>, relax: &Relaxation, respect: bool) -> Vec<(usize, bool)> {
    use crate::model::WhenUnsatisfiable::*;
    let spec = &p.pod.spec;
    let mut out: Vec<(usize, bool)> = Vec::new();
    let mut anyway = 0;
    for (c, &g) in spec.spread.iter().zip(&p.spread) {
        match c.when_unsatisfiable {
            DoNotSchedule => out.push((g, false)),
            ScheduleAnyway => {
                if respect && anyway >= relax.dropped_schedule_anyway {
                    out.push((g, false));
                }
                anyway += 1;
            }
        }
    }
    out.extend(p.affinity.iter().map(|&g| (g, false)));
    out.extend(p.anti.iter().map(|&g| (g, true)));
    if respect {
        out.extend(
            p.pref_affinity
                .iter()
                .skip(relax.dropped_pref_affinity)
                .map(|&g| (g, false)),
        );
        out.extend(
            p.pref_anti
                .iter()
                .skip(relax.dropped_pref_anti)
                .map(|&g| (g, false)),
        );
    }
    out
}

#[cfg(test)]
#[path = "scheduler_tests.rs"]
mod tests;
