//! Cost repacking: Karpenter packs first-fit and lets each claim take its cheapest option,
//! which wastes capacity when pod shapes differ or the most economical types are small. For
//! pods that no per-node constraint ties to their neighbours, this rebuilds a pool's new
//! claims in one problem — pods of different requirements ([`classes`]) share nodes where an
//! offering admits them all — and keeps the result only when it is cheaper.

pub mod classes;
mod greedy;

use crate::lpfit::Problem;
use crate::pools::PoolCtx;
use crate::prepare::PodInfo;
use crate::requirements::Requirements;
use crate::res::Res;
use crate::scheduler::Run;
use crate::slots::{Slot, SlotKind};
use crate::topology::Topology;
use classes::Classes;
use greedy::Bins;

/// Problems larger than this keep their first-fit packing (the greedy is quadratic).
const MAX_GROUP: usize = 2500;

/// Repacks the new claims of every eligible pool in `run`.
pub fn repack(run: &mut Run<'_>) {
    for pool in 0..run.pools.len() {
        let pc = &run.pools[pool];
        if pc.min_values || pc.remaining.is_some() || pc.nodes_left.is_some() {
            continue;
        }
        let slots: Vec<usize> = (run.existing..run.slots.len())
            .filter(|&s| {
                let slot = &run.slots[s];
                matches!(slot.kind, SlotKind::Bin { pool: p, .. } if p == pool)
                    && !slot.pods.is_empty()
                    && slot.pods.iter().all(|&i| free(&run.pods[i], &run.topo))
            })
            .collect();
        if !slots.is_empty() {
            repack_pool(run, pool, &slots);
        }
    }
}

/// A pod nothing on its node depends on: no hostname-level constraint of its own, no group
/// at hostname level counts it, no host ports.
fn free(p: &PodInfo<'_>, topo: &Topology) -> bool {
    p.pod.spec.host_ports.is_empty()
        && p.spread
            .iter()
            .chain(&p.affinity)
            .chain(&p.anti)
            .chain(&p.pref_affinity)
            .chain(&p.pref_anti)
            .chain(&p.matching)
            .chain(&p.inverse)
            .all(|&g| !topo.groups[g].is_hostname())
}

fn repack_pool(run: &mut Run<'_>, pool: usize, slots: &[usize]) {
    let pods: Vec<usize> = slots
        .iter()
        .flat_map(|&s| run.slots[s].pods.iter().copied())
        .collect();
    if pods.len() > MAX_GROUP {
        return;
    }
    let Some(classes) = Classes::build(run, pool, slots) else {
        return;
    };
    let pc = &run.pools[pool];
    let dims = classes::demanded(&pods, &run.pods);
    let all = classes::columns(pc, &classes, &dims);
    let wide = classes::undominated(pc, &all, &dims);
    let efficient = classes::efficient(pc, &wide, &dims);
    let before: f64 = slots
        .iter()
        .map(|&s| cheapest_fit(pc, &run.slots[s].reqs, &used(pc, &run.slots[s])))
        .sum();
    let n = pc.types[0].usable.0.len();
    let cost = |bins: &[(usize, Vec<usize>)]| -> f64 {
        bins.iter()
            .map(|(c, ps)| {
                let reqs = node_reqs(pc, &classes, ps);
                let used = classes::sum(ps, &run.pods, n);
                debug_assert!(pc.types[wide[*c].t].usable.fits(&used));
                cheapest_fit(pc, &reqs, &used)
            })
            .sum()
    };
    let pb = Problem {
        pc,
        cols: &wide,
        classes: &classes,
        pods: &run.pods,
        dims: &dims,
    };
    let options: Vec<(f64, Bins)> = packings(&pb, &efficient, &pods)
        .into_iter()
        .map(|bins| {
            let typed = bins
                .iter()
                .map(|(c, ps)| (wide[*c].t, ps.clone()))
                .collect();
            (cost(&bins), typed)
        })
        .collect();
    let Some((after, bins)) = options.into_iter().min_by(|a, b| a.0.total_cmp(&b.0)) else {
        return;
    };
    if after >= before - 1e-9 {
        return;
    }
    let bins: Vec<(usize, Requirements, Vec<usize>)> = bins
        .into_iter()
        .map(|(t, ps)| (t, node_reqs(pc, &classes, &ps), ps))
        .collect();
    install(run, pool, slots, bins);
}

fn node_reqs(pc: &PoolCtx<'_>, classes: &Classes, pods: &[usize]) -> Requirements {
    let mut r = pc.reqs.clone();
    r.add_all(&classes.node_reqs(pods));
    r
}

/// Candidate packings over the problem's columns: the value-per-dollar greedy on the
/// `efficient` ones, the dual-guided greedy, and the rounded configuration LP (its leftovers
/// packed by the greedy).
fn packings(pb: &Problem<'_, '_>, efficient: &[usize], group: &[usize]) -> Vec<Bins> {
    let greedy = |g: &[usize]| greedy::greedy(pb.pc, pb.cols, efficient, pb.classes, g, pb.pods);
    let mut options = Vec::new();
    options.extend(greedy(group));
    options.extend(crate::lpfit::dual_greedy(pb, group));
    if let Some((mut bins, left)) = crate::lpfit::pack(pb, group)
        && (left.is_empty() || greedy(&left).map(|g| bins.extend(g)).is_some())
    {
        options.push(bins);
    }
    options
}

fn used(pc: &PoolCtx<'_>, slot: &Slot) -> Res {
    match slot.kind {
        SlotKind::Bin { target, .. } => pc.types[target].usable.minus(&slot.free),
        _ => slot.free.clone(),
    }
}

/// The cheapest compatible type that holds `used` (plus its DaemonSets).
fn cheapest_fit(pc: &PoolCtx<'_>, reqs: &Requirements, used: &Res) -> f64 {
    pc.compatible(reqs)
        .iter()
        .find(|&&(t, _)| pc.types[t].usable.fits(used))
        .map_or(f64::MAX, |&(_, p)| p)
}

/// Replaces the pool's claims with the repacked ones, reusing slot indices.
fn install(
    run: &mut Run<'_>,
    pool: usize,
    slots: &[usize],
    bins: Vec<(usize, Requirements, Vec<usize>)>,
) {
    let template = run.slots[slots[0]].clone();
    for &s in slots {
        run.slots[s].pods.clear();
    }
    let mut free_slots = slots.iter().copied();
    for (t, reqs, pods) in bins {
        let mut slot = Slot {
            kind: SlotKind::Bin { pool, target: t },
            reqs,
            free: run.pools[pool].types[t].usable.clone(),
            pods: Vec::new(),
            ..template.clone()
        };
        for &i in &pods {
            slot.free.sub(&run.pods[i].req);
        }
        slot.pods = pods;
        let s = match free_slots.next() {
            Some(s) => s,
            None => {
                run.slots.push(slot.clone());
                run.slots.len() - 1
            }
        };
        for &i in &slot.pods {
            run.placed[i] = Some(s);
        }
        run.slots[s] = slot;
    }
}
