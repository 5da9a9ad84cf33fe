//! The value-per-dollar greedy: repeatedly open the column whose first-fit filling carries
//! the most normalised pending demand per dollar.

use super::classes::{Classes, Column};
use crate::pools::PoolCtx;
use crate::prepare::PodInfo;
use crate::res::Res;

/// Bins as (column index, pods).
pub type Bins = Vec<(usize, Vec<usize>)>;

/// Packs `group` onto the columns `candidates` (indices into `cols`); `None` when some pod
/// fits none of them.
pub fn greedy(
    pc: &PoolCtx<'_>,
    cols: &[Column],
    candidates: &[usize],
    classes: &Classes,
    group: &[usize],
    pods: &[PodInfo<'_>],
) -> Option<Bins> {
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
        for &c in candidates {
            let col = &cols[c];
            let open = |i: usize| col.mask & (1 << classes.of[&i]) != 0;
            let (v, chosen) = fill(&pc.types[col.t].usable, &remaining, pods, &value, &open);
            if chosen.is_empty() {
                continue;
            }
            let eff = v / col.price;
            if best.as_ref().is_none_or(|b| eff > b.0 + 1e-12) {
                best = Some((eff, c, chosen));
            }
        }
        let (_, c, chosen) = best?;
        remaining.retain(|i| !chosen.contains(i));
        bins.push((c, chosen));
    }
    Some(bins)
}

/// First-fit of `remaining` (highest value first) into one node of `usable` capacity.
fn fill(
    usable: &Res,
    remaining: &[usize],
    pods: &[PodInfo<'_>],
    value: &dyn Fn(usize) -> f64,
    open: &dyn Fn(usize) -> bool,
) -> (f64, Vec<usize>) {
    let mut free = usable.clone();
    let mut chosen = Vec::new();
    let mut v = 0.0;
    for &i in remaining {
        if open(i) && free.fits(&pods[i].req) {
            free.sub(&pods[i].req);
            chosen.push(i);
            v += value(i);
        }
    }
    (v, chosen)
}
