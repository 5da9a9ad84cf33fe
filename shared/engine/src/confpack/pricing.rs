//! Column-generation pricing: the most valuable whole-pod pattern per node type under dual
//! prices (the knapsack of [`super::knapsack`], bounded by its LP when the search is cut
//! short), and the dual-guided greedy built on it.

use minilp::{ComparisonOp, OptimizationDirection, Problem as Lp, Variable};

use super::{Instance, Shape, knapsack};

/// For every type, the most valuable pattern under duals `pi`. Returns the largest
/// value/price ratio (an upper bound when a search was cut short) and the improving patterns.
pub(super) fn price(
    inst: &Instance<'_>,
    pi: &[f64],
    limit: usize,
) -> (f64, Vec<(usize, Vec<u32>)>) {
    let mut kappa = 0.0f64;
    let mut found = Vec::new();
    for t in 0..inst.types.len() {
        let price = inst.types[t].price;
        // No filling can be worth more than the fractional bound: when even that does not
        // beat the price, the type has no improving pattern and the bound is what counts.
        let cheap = fractional_bound(inst, t, pi);
        if cheap <= price * (1.0 + 1e-7) {
            kappa = kappa.max(cheap / price);
            continue;
        }
        let knapsack::Best {
            mut value,
            mut counts,
            exact,
        } = knapsack::solve(inst, t, pi, limit);
        let mut bound = value;
        if !exact {
            match knapsack_lp(inst, t, pi) {
                Some((ub, frac)) => {
                    bound = ub;
                    let (v, c) = complete(
                        inst,
                        t,
                        pi,
                        frac.iter().map(|x| (x + 1e-9).floor() as u32).collect(),
                    );
                    if v > value {
                        (value, counts) = (v, c);
                    }
                }
                None => bound = cheap,
            }
        }
        kappa = kappa.max(bound / price);
        if value > price * (1.0 + 1e-7) {
            found.push((t, counts));
        }
    }
    (kappa, found)
}

/// Adds pods to `counts` by value density while they fit; returns (value, counts).
fn complete(inst: &Instance<'_>, t: usize, pi: &[f64], mut counts: Vec<u32>) -> (f64, Vec<u32>) {
    let cap = &inst.types[t].cap;
    let mut free: Vec<f64> = cap.clone();
    for (k, c) in counts.iter().enumerate() {
        for (f, r) in free.iter_mut().zip(&inst.shapes[k].req) {
            *f -= r * *c as f64;
        }
    }
    let weight = |k: usize| {
        inst.shapes[k]
            .req
            .iter()
            .zip(cap)
            .map(|(r, c)| if *c > 0.0 { r / c } else { 0.0 })
            .sum::<f64>()
    };
    let mut order: Vec<usize> = (0..inst.shapes.len())
        .filter(|&k| (inst.allowed)(k, t) && pi[k] > 0.0)
        .collect();
    order.sort_by(|&a, &b| {
        (pi[b] / weight(b).max(1e-12)).total_cmp(&(pi[a] / weight(a).max(1e-12)))
    });
    for k in order {
        let req = &inst.shapes[k].req;
        while counts[k] < inst.shapes[k].count && req.iter().zip(&free).all(|(r, f)| r <= f) {
            for (f, r) in free.iter_mut().zip(req) {
                *f -= r;
            }
            counts[k] += 1;
        }
    }
    let value = counts.iter().zip(pi).map(|(c, p)| *c as f64 * p).sum();
    (value, counts)
}

/// The LP relaxation of the node's knapsack: an upper bound on any pattern's value, and the
/// fractional counts that reach it.
fn knapsack_lp(inst: &Instance<'_>, t: usize, pi: &[f64]) -> Option<(f64, Vec<f64>)> {
    let mut lp = Lp::new(OptimizationDirection::Maximize);
    let ks: Vec<usize> = (0..inst.shapes.len())
        .filter(|&k| (inst.allowed)(k, t) && pi[k] > 0.0)
        .collect();
    let vars: Vec<Variable> = ks
        .iter()
        .map(|&k| lp.add_var(pi[k], (0.0, inst.shapes[k].count as f64)))
        .collect();
    for (d, cap) in inst.types[t].cap.iter().enumerate() {
        let terms: Vec<(Variable, f64)> = ks
            .iter()
            .zip(&vars)
            .filter(|(k, _)| inst.shapes[**k].req[d] > 0.0)
            .map(|(k, v)| (*v, inst.shapes[*k].req[d]))
            .collect();
        if !terms.is_empty() {
            lp.add_constraint(terms.as_slice(), ComparisonOp::Le, *cap);
        }
    }
    let sol = lp.solve().ok()?;
    let mut frac = vec![0.0; inst.shapes.len()];
    for (k, v) in ks.iter().zip(&vars) {
        frac[*k] = sol[*v];
    }
    Some((sol.objective(), frac))
}

/// Per-dimension fractional bound on a node's value: the best value density times capacity.
fn fractional_bound(inst: &Instance<'_>, t: usize, pi: &[f64]) -> f64 {
    let cap = &inst.types[t].cap;
    (0..cap.len())
        .map(|d| {
            let density = (0..inst.shapes.len())
                .filter(|&k| (inst.allowed)(k, t) && pi[k] > 0.0)
                .map(|k| {
                    let r = inst.shapes[k].req[d];
                    if r > 0.0 { pi[k] / r } else { f64::INFINITY }
                })
                .fold(0.0, f64::max);
            density * cap[d]
        })
        .fold(f64::INFINITY, f64::min)
}

/// Dual-guided greedy: repeatedly open the node type whose most valuable pattern (under fixed
/// dual prices `pi`) is worth the most per dollar, until every pod is placed. Returns
/// (type, counts per shape, copies) per opened pattern, or `None` if some pod fits no type.
pub fn greedy(
    inst: &Instance<'_>,
    pi: &[f64],
    limit: usize,
) -> Option<Vec<(usize, Vec<u32>, u32)>> {
    let mut left: Vec<Shape> = inst.shapes.to_vec();
    // Shapes the LP prices at zero still need a place: give them a small positive worth.
    let floor = pi
        .iter()
        .copied()
        .filter(|v| *v > 0.0)
        .fold(f64::INFINITY, f64::min)
        .min(1.0)
        * 1e-3;
    let pi: Vec<f64> = pi.iter().map(|v| v.max(floor.max(1e-9))).collect();
    let mut out = Vec::new();
    while left.iter().any(|s| s.count > 0) {
        let cur = Instance {
            shapes: &left,
            types: inst.types,
            allowed: inst.allowed,
        };
        let mut best: Option<(f64, usize, Vec<u32>)> = None;
        for t in 0..inst.types.len() {
            let knapsack::Best { value, counts, .. } = knapsack::solve(&cur, t, &pi, limit);
            let ratio = value / inst.types[t].price;
            if value > 0.0 && best.as_ref().is_none_or(|b| ratio > b.0 * (1.0 + 1e-12)) {
                best = Some((ratio, t, counts));
            }
        }
        let (_, t, counts) = best?;
        // With fixed prices the same filling stays the best while every pod it holds is
        // still pending, so it is opened as many times as that lasts.
        let copies = left
            .iter()
            .zip(&counts)
            .filter(|(_, c)| **c > 0)
            .map(|(s, c)| s.count / c)
            .min()
            .unwrap_or(1)
            .max(1);
        for (s, c) in left.iter_mut().zip(&counts) {
            s.count -= c * copies;
        }
        out.push((t, counts, copies));
    }
    Some(out)
}
