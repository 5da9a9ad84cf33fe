//! What a repacked pool must respect: its limits, charged per claim with the largest option
//! it may offer (the capacity of the type it is sized for), and every claim's minValues over
//! the options it will send after truncation.

use crate::min_values::min_values_satisfied;
use crate::pools::{PoolCtx, TypeCtx};
use crate::requirements::Requirements;
use crate::res::{CPU, MEMORY, PODS, Res};
use crate::slots::{Slot, SlotKind};

/// One repacked claim: the type it is sized (and charged) for, its requirements, its pods
/// and the price of its cheapest option.
#[derive(Clone, Debug)]
pub struct Bin {
    pub target: usize,
    pub reqs: Requirements,
    pub pods: Vec<usize>,
    /// The pods' requests.
    pub used: Res,
    pub price: f64,
}

/// What the repacked claims of a pool may use: the pool's remaining limits plus what the
/// claims they replace were charged.
#[derive(Clone, Debug)]
pub struct Budget {
    remaining: Option<Res>,
    nodes: Option<i64>,
}

impl Budget {
    pub fn refunding<'s>(pc: &PoolCtx<'_>, slots: impl Iterator<Item = &'s Slot>) -> Budget {
        let mut b = Budget {
            remaining: pc.remaining.clone(),
            nodes: pc.nodes_left,
        };
        for slot in slots {
            if let Some(n) = &mut b.nodes {
                *n += 1;
            }
            if let (Some(r), SlotKind::Bin { target, .. }) = (&mut b.remaining, &slot.kind) {
                for (have, back) in r.0.iter_mut().zip(&pc.types[*target].capacity.0) {
                    if *have != i64::MAX {
                        *have += back;
                    }
                }
            }
        }
        b
    }

    /// The bins, if they fit the limits and keep minValues; when their sizing types break
    /// the limits, each is sized for its cheapest option instead and checked again.
    pub fn admit(
        &self,
        pc: &PoolCtx<'_>,
        mut bins: Vec<Bin>,
        max_types: usize,
    ) -> Option<Vec<Bin>> {
        if self.nodes.is_some_and(|n| (bins.len() as i64) > n) {
            return None;
        }
        if !self.fits(pc, &bins) {
            for b in &mut bins {
                b.target = cheapest(pc, &b.reqs, &b.used, b.target)?.1;
            }
            if !self.fits(pc, &bins) {
                return None;
            }
        }
        if pc.min_values {
            for b in &bins {
                let options: Vec<&TypeCtx<'_>> = options(pc, &b.reqs, &b.used, b.target)
                    .into_iter()
                    .take(max_types)
                    .map(|t| &pc.types[t])
                    .collect();
                min_values_satisfied(&b.reqs, &options).ok()?;
            }
        }
        Some(bins)
    }

    fn fits(&self, pc: &PoolCtx<'_>, bins: &[Bin]) -> bool {
        let Some(r) = &self.remaining else {
            return true;
        };
        let mut left = r.clone();
        for b in bins {
            left.sub(&pc.types[b.target].capacity);
        }
        left.0
            .iter()
            .zip(&r.0)
            .all(|(l, had)| *had == i64::MAX || *l >= 0)
    }
}

/// The types a claim sized for `target` may offer, cheapest first.
fn options(pc: &PoolCtx<'_>, reqs: &Requirements, used: &Res, target: usize) -> Vec<usize> {
    let charge = &pc.types[target].capacity;
    pc.compatible(reqs)
        .iter()
        .map(|&(t, _)| t)
        .filter(|&t| {
            pc.types[t].usable.fits(used) && pc.within_charge(&pc.types[t].capacity, charge)
        })
        .collect()
}

/// The price and type of the cheapest option of a claim sized for `target` holding `used`.
pub fn cheapest(
    pc: &PoolCtx<'_>,
    reqs: &Requirements,
    used: &Res,
    target: usize,
) -> Option<(f64, usize)> {
    let charge = &pc.types[target].capacity;
    pc.compatible(reqs)
        .iter()
        .find(|&&(t, _)| {
            pc.types[t].usable.fits(used) && pc.within_charge(&pc.types[t].capacity, charge)
        })
        .map(|&(t, p)| (p, t))
}

/// Column prices raised by `penalty` times the column's share of the pool's limited
/// resources, valued at the columns' mean price per unit of each.
pub fn penalised(pc: &PoolCtx<'_>, cols: &[super::classes::Column], penalty: f64) -> Vec<f64> {
    let limited: Vec<usize> = match &pc.remaining {
        Some(r) if penalty > 0.0 => [CPU, MEMORY, PODS]
            .into_iter()
            .filter(|&d| r.0[d] != i64::MAX)
            .collect(),
        _ => Vec::new(),
    };
    let unit: Vec<f64> = limited
        .iter()
        .map(|&d| {
            let (p, c) = cols.iter().fold((0.0, 0.0), |(p, c), col| {
                (p + col.price, c + pc.types[col.t].capacity.0[d] as f64)
            });
            if c > 0.0 { p / c } else { 0.0 }
        })
        .collect();
    cols.iter()
        .map(|col| {
            let extra: f64 = limited
                .iter()
                .zip(&unit)
                .map(|(&d, u)| u * pc.types[col.t].capacity.0[d] as f64)
                .sum();
            col.price + penalty * extra
        })
        .collect()
}
