//! Cost repacking: Karpenter packs first-fit and lets each claim take its cheapest option,
//! which wastes capacity when pod shapes differ or the most economical types are small. For
//! pods that no per-node constraint ties to their neighbours, this rebuilds a pool's new
//! claims in one problem — pods of different requirements ([`classes`]) share nodes where an
//! offering admits them all — and keeps the result only when it is cheaper and, in a limited
//! pool, within the limits and every claim's minValues ([`budget`]).

mod budget;
pub mod classes;
mod lpfit;
pub mod shapes;

use crate::pools::PoolCtx;
use crate::prepare::PodInfo;
use crate::requirements::Requirements;
use crate::reserve::Purchasable;
use crate::scheduler::Run;
use crate::slots::{Slot, SlotKind};
use crate::topology::Topology;
use budget::{Bin, Budget};
use classes::Classes;
use shapes::Problem;

/// Multipliers tried on each column's share of the limited resources when the cheapest
/// packing breaks a NodePool's limits (0 = plain prices).
const LIMIT_PENALTIES: [f64; 4] = [0.0, 0.5, 2.0, 8.0];

/// Repacks the new claims of every pool in `run`; `max_types` is the option cap at launch.
pub fn repack(run: &mut Run<'_>, max_types: usize) {
    for pool in 0..run.pools.len() {
        let slots: Vec<usize> = (run.existing..run.slots.len())
            .filter(|&s| {
                let slot = &run.slots[s];
                matches!(slot.kind, SlotKind::Bin { pool: p, .. } if p == pool)
                    && !slot.pods.is_empty()
                    && slot.reservation.is_none()
                    && slot.pods.iter().all(|&i| free(&run.pods[i], &run.topo))
            })
            .collect();
        if !slots.is_empty() {
            repack_pool(run, pool, &slots, max_types);
        }
    }
}

/// A pod nothing on its node depends on: no hostname-level constraint of its own, no group
/// at hostname level counts it, no host ports, no persistent volumes (their topology and
/// attach limits tie it to its claim's node).
fn free(p: &PodInfo<'_>, topo: &Topology) -> bool {
    p.pod.spec.host_ports.is_empty()
        && p.pod.volumes.is_empty()
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

fn repack_pool(run: &mut Run<'_>, pool: usize, slots: &[usize], max_types: usize) {
    let classes = Classes::build(run, pool, slots);
    let pc = &run.pools[pool];
    let budget = Budget::refunding(pc, slots.iter().map(|&s| &run.slots[s]));
    let buy = Purchasable::of(pc);
    let before: f64 = slots
        .iter()
        .map(|&s| {
            let slot = &run.slots[s];
            let SlotKind::Bin { target, .. } = slot.kind else {
                return f64::MAX;
            };
            let used = pc.types[target].usable.minus(&slot.free);
            let reqs = buy.reqs(&slot.reqs);
            budget::cheapest(pc, &reqs, &used, target).map_or(f64::MAX, |b| b.0)
        })
        .sum();
    let problems: Vec<Problem> = classes
        .problems()
        .iter()
        .map(|members| problem(run, pool, &classes, members, slots))
        .collect();
    for penalty in LIMIT_PENALTIES {
        let Some(bins) = pack_all(run, pool, &classes, &problems, penalty) else {
            return;
        };
        let after: f64 = bins.iter().map(|b| b.price).sum();
        if after >= before - 1e-9 {
            return;
        }
        if let Some(bins) = budget.admit(pc, bins, max_types) {
            install(run, pool, slots, bins);
            return;
        }
        if pc.remaining.is_none() && pc.nodes_left.is_none() {
            return;
        }
    }
}

/// One problem: the pods of `members`' classes, on the columns open to them.
fn problem(
    run: &Run<'_>,
    pool: usize,
    classes: &Classes,
    members: &[usize],
    slots: &[usize],
) -> Problem {
    let pc = &run.pools[pool];
    let pods: Vec<(usize, usize)> = slots
        .iter()
        .flat_map(|&s| run.slots[s].pods.iter().copied())
        .filter_map(|i| {
            let k = classes.of[&i];
            members.iter().position(|&m| m == k).map(|j| (i, j))
        })
        .collect();
    let ids: Vec<usize> = pods.iter().map(|(i, _)| *i).collect();
    if ids.is_empty() {
        return Problem::new(&[], &run.pods, &[], Vec::new(), |_| Vec::new());
    }
    let dims = classes::demanded(&ids, &run.pods);
    let all = classes::columns(pc, classes, members, &dims);
    let wide = classes::undominated(pc, &all, &dims);
    Problem::new(&pods, &run.pods, &dims, wide, |t| {
        dims.iter().map(|&d| pc.types[t].usable.0[d]).collect()
    })
}

/// Packs every problem of the pool with column prices raised by `penalty` times their share
/// of the limited resources; `None` when some problem cannot be packed.
fn pack_all(
    run: &Run<'_>,
    pool: usize,
    classes: &Classes,
    problems: &[Problem],
    penalty: f64,
) -> Option<Vec<Bin>> {
    let pc = &run.pools[pool];
    let mut out = Vec::new();
    for pb in problems.iter().filter(|pb| !pb.shapes.is_empty()) {
        let prices = budget::penalised(pc, &pb.cols, penalty);
        let options = packings(pb, &prices);
        let best = options
            .into_iter()
            .filter_map(|bins| price_bins(run, pool, classes, &bins))
            .min_by(|a, b| total(a).total_cmp(&total(b)))?;
        out.extend(best);
    }
    Some(out)
}

fn total(bins: &[Bin]) -> f64 {
    bins.iter().map(|b| b.price).sum()
}

/// Candidate packings as bins of (type, pods): the value-per-dollar greedy, and the rounded
/// configuration LP with its completions. Both work on the columns not beaten per dollar in
/// every dimension, which keeps the LP small.
fn packings(pb: &Problem, prices: &[f64]) -> Vec<Vec<(usize, Vec<usize>)>> {
    let dims: Vec<usize> = (0..pb.caps.first().map_or(0, Vec::len)).collect();
    let mut cols = pb.cols.clone();
    for (c, p) in cols.iter_mut().zip(prices) {
        c.price = *p;
    }
    let mut keep = classes::efficient_scaled(&cols, &pb.caps, &dims);
    for c in per_shape_best(pb, &cols) {
        if keep.len() >= MAX_COLUMNS {
            break;
        }
        if !keep.contains(&c) {
            keep.push(c);
        }
    }
    keep.sort_unstable();
    let sub = Problem {
        shapes: pb.shapes.clone(),
        cols: keep.iter().map(|&c| cols[c].clone()).collect(),
        caps: keep.iter().map(|&c| pb.caps[c].clone()).collect(),
    };
    let sub_prices: Vec<f64> = sub.cols.iter().map(|c| c.price).collect();
    let all: Vec<usize> = (0..sub.cols.len()).collect();
    let typed = |opened: &[shapes::Opened]| -> Vec<(usize, Vec<usize>)> {
        shapes::bins(&sub, opened)
            .into_iter()
            .map(|(c, pods)| (sub.cols[c].t, pods))
            .collect()
    };
    let mut out = Vec::new();
    if let Some(g) = shapes::greedy(&sub, &all, sub.counts()) {
        out.push(typed(&g));
    }
    for mut p in lpfit::pack(&sub, &sub_prices) {
        if p.left.iter().any(|n| *n > 0) {
            match shapes::greedy(&sub, &all, p.left.clone()) {
                Some(g) => p.opened.extend(g),
                None => continue,
            }
        }
        out.push(typed(&p.opened));
    }
    out
}

/// Columns per shape to keep beside the per-dollar frontier.
const PER_SHAPE: usize = 3;
/// At most this many columns beside the frontier take part (the knapsacks of column
/// generation run once per column and round).
const MAX_COLUMNS: usize = 64;

/// For each shape, the columns that host its pods alone at the lowest price per pod: they
/// carry what whole pods per node cost, which the per-dollar frontier ignores.
fn per_shape_best(pb: &Problem, cols: &[classes::Column]) -> Vec<usize> {
    let ranked: Vec<Vec<usize>> = (0..pb.shapes.len())
        .map(|k| {
            let mut best: Vec<(f64, usize)> = (0..cols.len())
                .filter(|&c| pb.allowed(k, c))
                .filter_map(|c| {
                    let n = pb.fit(k, &pb.caps[c]).min(pb.shapes[k].pods.len() as u32);
                    (n > 0).then(|| (cols[c].price / f64::from(n), c))
                })
                .collect();
            best.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
            best.into_iter().take(PER_SHAPE).map(|(_, c)| c).collect()
        })
        .collect();
    // Every shape's best column first, then every shape's second, and so on.
    (0..PER_SHAPE)
        .flat_map(|r| ranked.iter().filter_map(move |v| v.get(r).copied()))
        .collect()
}

/// Prices each bin at its cheapest option, sized for its type.
fn price_bins(
    run: &Run<'_>,
    pool: usize,
    classes: &Classes,
    bins: &[(usize, Vec<usize>)],
) -> Option<Vec<Bin>> {
    let pc = &run.pools[pool];
    let n = pc.types.first()?.usable.0.len();
    let buy = Purchasable::of(pc);
    bins.iter()
        .map(|&(t, ref pods)| {
            // Priced at what can be bought; the bin keeps the pool's capacity types, so the
            // plan can still give it a reservation left over (`reserve::choose`).
            let reqs = node_reqs(pc, classes, pods);
            let used = classes::sum(pods, &run.pods, n);
            let (price, _) = budget::cheapest(pc, &buy.reqs(&reqs), &used, t)?;
            Some(Bin {
                target: t,
                reqs,
                pods: pods.clone(),
                used,
                price,
            })
        })
        .collect()
}

fn node_reqs(pc: &PoolCtx<'_>, classes: &Classes, pods: &[usize]) -> Requirements {
    let mut r = pc.reqs.clone();
    r.add_all(&classes.node_reqs(pods));
    r
}

/// Replaces the pool's claims with the repacked ones, reusing slot indices, and moves the
/// pool's limits from the old claims' charges to the new ones'.
fn install(run: &mut Run<'_>, pool: usize, slots: &[usize], bins: Vec<Bin>) {
    let template = run.slots[slots[0]].clone();
    for &s in slots {
        if let SlotKind::Bin { target, .. } = run.slots[s].kind {
            let cap = run.pools[pool].types[target].capacity.clone();
            run.pools[pool].refund(&cap);
        }
        run.slots[s].pods.clear();
    }
    let mut free_slots = slots.iter().copied();
    for bin in bins {
        let cap = run.pools[pool].types[bin.target].capacity.clone();
        run.pools[pool].charge(&cap);
        let mut slot = Slot {
            kind: SlotKind::Bin {
                pool,
                target: bin.target,
            },
            reqs: bin.reqs,
            free: run.pools[pool].types[bin.target].usable.clone(),
            pods: Vec::new(),
            attached: Vec::new(),
            reservation: None,
            ..template.clone()
        };
        for &i in &bin.pods {
            slot.free.sub(&run.pods[i].req);
        }
        slot.pods = bin.pods;
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
