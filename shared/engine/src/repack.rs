//! Cost repacking: Karpenter packs first-fit and lets each claim take its cheapest option,
//! which wastes capacity when pod shapes differ or the most economical types are small. For
//! pods that no per-node constraint ties to their neighbours, this rebuilds the new claims of
//! each (pool, requirements) group greedily — every step opens the instance type whose
//! best filling carries the most pending demand per dollar — and keeps the result only when
//! it is cheaper.

use rustc_hash::FxHashMap;

use crate::pools::PoolCtx;
use crate::prepare::PodInfo;
use crate::requirements::Requirements;
use crate::res::Res;
use crate::scheduler::Run;
use crate::slots::{Slot, SlotKind};
use crate::topology::Topology;

/// Groups larger than this keep their first-fit packing (the greedy is quadratic).
const MAX_GROUP: usize = 2500;

/// Repacks every eligible group of new claims in `run`.
pub fn repack(run: &mut Run<'_>) {
    let mut groups: FxHashMap<(usize, Requirements), Vec<usize>> = FxHashMap::default();
    for s in run.existing..run.slots.len() {
        let slot = &run.slots[s];
        if let SlotKind::Bin { pool, .. } = slot.kind
            && !slot.pods.is_empty()
            && !run.pools[pool].min_values
            && run.pools[pool].remaining.is_none()
            && run.pools[pool].nodes_left.is_none()
            && slot.pods.iter().all(|&i| free(&run.pods[i], &run.topo))
        {
            groups.entry((pool, slot.reqs.clone())).or_default().push(s);
        }
    }
    let mut keys: Vec<&(usize, Requirements)> = groups.keys().collect();
    keys.sort_by_key(|k| groups[*k][0]);
    let order: Vec<(usize, Requirements)> = keys.into_iter().cloned().collect();
    for key in order {
        let slots = &groups[&key];
        if slots.len() > 1 {
            repack_group(run, key.0, &key.1, slots);
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
            .all(|&g| !topo.groups[g].is_hostname())
}

fn repack_group(run: &mut Run<'_>, pool: usize, reqs: &Requirements, slots: &[usize]) {
    let pc = &run.pools[pool];
    let pods: Vec<usize> = slots
        .iter()
        .flat_map(|&s| run.slots[s].pods.iter().copied())
        .collect();
    if pods.len() > MAX_GROUP {
        return;
    }
    let dims = demanded(&pods, &run.pods);
    let types = candidates(pc, reqs, &dims);
    let wide = undominated_types(pc, reqs, &dims);
    let before: f64 = slots
        .iter()
        .map(|&s| cheapest_fit(pc, reqs, &used(pc, &run.slots[s])))
        .sum();
    let cost = |bins: &[(usize, Vec<usize>)]| -> f64 {
        bins.iter()
            .map(|(t, ps)| cheapest_fit(pc, reqs, &sum(ps, &run.pods, pc.types[*t].usable.0.len())))
            .sum()
    };
    let options = packings(pc, &types, &wide, &pods, &run.pods, &dims);
    let Some((after, bins)) = options
        .into_iter()
        .map(|b| (cost(&b), b))
        .min_by(|a, b| a.0.total_cmp(&b.0))
    else {
        return;
    };
    if after >= before - 1e-9 {
        return;
    }
    install(run, pool, reqs, slots, bins);
}

/// Compatible types no other type beats outright in the demanded dimensions (the LP's
/// candidates: small types matter when whole pods must fit).
fn undominated_types(pc: &PoolCtx<'_>, reqs: &Requirements, dims: &[usize]) -> Vec<(usize, f64)> {
    let all = pc.compatible(reqs);
    let nodes: Vec<crate::confpack::NodeType> = all
        .iter()
        .map(|&(t, price)| crate::confpack::NodeType {
            cap: dims
                .iter()
                .map(|&d| pc.types[t].usable.0[d] as f64)
                .collect(),
            price,
        })
        .collect();
    let hosts = vec![1u64; nodes.len()];
    crate::confpack::undominated(&nodes, &hosts)
        .into_iter()
        .map(|i| all[i])
        .filter(|&(t, _)| dims.iter().all(|&d| pc.types[t].usable.0[d] > 0))
        .collect()
}

/// Resource dimensions the pods request.
fn demanded(group: &[usize], pods: &[PodInfo<'_>]) -> Vec<usize> {
    let n = pods[group[0]].req.0.len();
    (0..n)
        .filter(|&d| group.iter().any(|&i| pods[i].req.0[d] > 0))
        .collect()
}

/// Candidate packings: the value-per-dollar greedy, the dual-guided greedy, and the rounded
/// configuration LP (its leftovers packed by the greedy).
fn packings(
    pc: &PoolCtx<'_>,
    types: &[(usize, f64)],
    wide: &[(usize, f64)],
    group: &[usize],
    pods: &[PodInfo<'_>],
    dims: &[usize],
) -> Vec<Vec<(usize, Vec<usize>)>> {
    let mut options = Vec::new();
    options.extend(greedy(pc, types, group, pods));
    options.extend(crate::lpfit::dual_greedy(pc, wide, group, pods, dims));
    if let Some((mut bins, left)) = crate::lpfit::pack(pc, wide, group, pods, dims)
        && (left.is_empty()
            || greedy(pc, types, &left, pods)
                .map(|g| bins.extend(g))
                .is_some())
    {
        options.push(bins);
    }
    options
}

/// Types not beaten per dollar in every demanded dimension by another type, with prices.
fn candidates(pc: &PoolCtx<'_>, reqs: &Requirements, dims: &[usize]) -> Vec<(usize, f64)> {
    let all = pc.compatible(reqs);
    let usable = |t: usize| dims.iter().map(move |&d| pc.types[t].usable.0[d]);
    let per = |t: usize, price: f64| usable(t).map(|u| u as f64 / price).collect::<Vec<f64>>();
    let mut kept: Vec<(usize, f64)> = Vec::new();
    for &(t, price) in all.iter() {
        if usable(t).any(|u| u <= 0) {
            continue;
        }
        let pt = per(t, price);
        let beaten = all.iter().any(|&(o, op)| {
            o != t && usable(o).all(|u| u > 0) && {
                let po = per(o, op);
                po.iter().zip(&pt).all(|(a, b)| a >= b) && po.iter().zip(&pt).any(|(a, b)| a > b)
            }
        });
        if !beaten {
            kept.push((t, price));
        }
    }
    kept
}

fn used(pc: &PoolCtx<'_>, slot: &Slot) -> Res {
    match slot.kind {
        SlotKind::Bin { target, .. } => pc.types[target].usable.minus(&slot.free),
        _ => slot.free.clone(),
    }
}

fn sum(ps: &[usize], pods: &[PodInfo<'_>], dims: usize) -> Res {
    let mut r = Res::zero(dims);
    for &i in ps {
        r.add(&pods[i].req);
    }
    r
}

/// The cheapest compatible type that holds `used` (plus its DaemonSets).
fn cheapest_fit(pc: &PoolCtx<'_>, reqs: &Requirements, used: &Res) -> f64 {
    pc.compatible(reqs)
        .iter()
        .find(|&&(t, _)| pc.types[t].usable.fits(used))
        .map_or(f64::MAX, |&(_, p)| p)
}

/// Greedy: repeatedly open the type whose first-fit filling carries the most normalised
/// demand per dollar.
fn greedy(
    pc: &PoolCtx<'_>,
    types: &[(usize, f64)],
    group: &[usize],
    pods: &[PodInfo<'_>],
) -> Option<Vec<(usize, Vec<usize>)>> {
    let dims = pods[group[0]].req.0.len();
    let mut total = vec![0f64; dims];
    for &i in group {
        for (d, v) in pods[i].req.0.iter().enumerate() {
            total[d] += *v as f64;
        }
    }
    let value = |i: usize| -> f64 {
        pods[i]
            .req
            .0
            .iter()
            .enumerate()
            .filter(|(d, _)| total[*d] > 0.0)
            .map(|(d, v)| *v as f64 / total[d])
            .sum()
    };
    let mut remaining: Vec<usize> = group.to_vec();
    remaining.sort_by(|&a, &b| value(b).total_cmp(&value(a)).then(a.cmp(&b)));
    let mut bins = Vec::new();
    while !remaining.is_empty() {
        let mut best: Option<(f64, usize, Vec<usize>)> = None;
        for &(t, price) in types {
            let (v, chosen) = fill(&pc.types[t].usable, &remaining, pods, &value);
            if chosen.is_empty() {
                continue;
            }
            let eff = v / price;
            if best.as_ref().is_none_or(|b| eff > b.0 + 1e-12) {
                best = Some((eff, t, chosen));
            }
        }
        let (_, t, chosen) = best?;
        remaining.retain(|i| !chosen.contains(i));
        bins.push((t, chosen));
    }
    Some(bins)
}

/// First-fit of `remaining` (highest value first) into one node of `usable` capacity.
fn fill(
    usable: &Res,
    remaining: &[usize],
    pods: &[PodInfo<'_>],
    value: &dyn Fn(usize) -> f64,
) -> (f64, Vec<usize>) {
    let mut free = usable.clone();
    let mut chosen = Vec::new();
    let mut v = 0.0;
    for &i in remaining {
        if free.fits(&pods[i].req) {
            free.sub(&pods[i].req);
            chosen.push(i);
            v += value(i);
        }
    }
    (v, chosen)
}

/// Replaces the group's claims with the repacked ones, reusing slot indices.
fn install(
    run: &mut Run<'_>,
    pool: usize,
    reqs: &Requirements,
    slots: &[usize],
    bins: Vec<(usize, Vec<usize>)>,
) {
    let template = run.slots[slots[0]].clone();
    for &s in slots {
        run.slots[s].pods.clear();
    }
    let mut free_slots = slots.iter().copied();
    for (t, pods) in bins {
        let mut slot = Slot {
            kind: SlotKind::Bin { pool, target: t },
            reqs: reqs.clone(),
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
