//! The pricing subproblem: the most valuable whole-pod filling of one node (an integer
//! multi-dimensional knapsack with a bounded count per shape), by depth-first branch and
//! bound. The bound at each search node is the smallest of the bounded fractional knapsacks
//! over each single dimension and over their sum (the surrogate), so it respects how many
//! pods of each shape are left — which is what makes the search finish on nodes that could
//! hold far more pods than any one shape has.

use minilp::{ComparisonOp, OptimizationDirection, Problem as Lp, Variable};

use super::Instance;

/// One shape the node may host: its value, requests (each dimension, then the surrogate)
/// and how many copies fit on an empty node.
struct Item {
    k: usize,
    value: f64,
    req: Vec<f64>,
    max: u32,
}

/// The best filling found: value, pods per shape, and whether the search completed (so the
/// value is the optimum rather than a lower bound on it).
pub(super) struct Best {
    pub value: f64,
    pub counts: Vec<u32>,
    pub exact: bool,
}

/// Search nodes tried with the cheap bounds before the LP-weighted surrogate is computed.
const QUICK: usize = 300;

/// Maximises Σ pi·counts over the fillings of a node of type `t`, within `limit` search nodes.
/// A search the cheap bounds cannot finish quickly is redone with one more surrogate
/// constraint, weighted by the knapsack LP's dual prices (whose fractional bound is the LP
/// bound itself at the root).
pub(super) fn solve(inst: &Instance<'_>, t: usize, pi: &[f64], limit: usize) -> Best {
    let quick = QUICK.min(limit);
    let first = search(inst, t, pi, quick, None);
    if first.exact || limit <= quick {
        return first;
    }
    let Some(w) = lp_weights(inst, t, pi) else {
        return first;
    };
    let second = search(inst, t, pi, limit - quick, Some(&w));
    if second.value >= first.value {
        second
    } else {
        Best {
            exact: second.exact,
            ..first
        }
    }
}

fn search(inst: &Instance<'_>, t: usize, pi: &[f64], limit: usize, w: Option<&[f64]>) -> Best {
    let items = items(inst, t, pi, w);
    let dims = items.first().map_or(0, |i| i.req.len());
    let by_density: Vec<Vec<usize>> = (0..dims).map(|d| density_order(&items, d)).collect();
    let cap = &inst.types[t].cap;
    let mut free = cap.clone();
    free.push(cap.iter().map(|c| if *c > 0.0 { 1.0 } else { 0.0 }).sum());
    if let Some(w) = w {
        free.push(cap.iter().zip(w).map(|(c, w)| c * w).sum());
    }
    let mut s = Search {
        items: &items,
        by_density,
        best: 0.0,
        best_counts: vec![0; items.len()],
        counts: vec![0; items.len()],
        nodes: 0,
        limit,
    };
    s.dfs(0, &mut free, 0.0);
    let mut counts = vec![0; inst.shapes.len()];
    for (it, c) in items.iter().zip(&s.best_counts) {
        counts[it.k] = *c;
    }
    Best {
        value: s.best,
        counts,
        exact: s.nodes < limit,
    }
}

/// The dual prices of the node's capacity in the knapsack LP (min Σ cap·w + Σ count·u
/// s.t. r_k·w + u_k ≥ π_k): the surrogate weights whose fractional bound equals the LP's.
fn lp_weights(inst: &Instance<'_>, t: usize, pi: &[f64]) -> Option<Vec<f64>> {
    let cap = &inst.types[t].cap;
    let mut lp = Lp::new(OptimizationDirection::Minimize);
    let w: Vec<Variable> = cap
        .iter()
        .map(|c| lp.add_var(*c, (0.0, f64::INFINITY)))
        .collect();
    for k in (0..inst.shapes.len()).filter(|&k| (inst.allowed)(k, t) && pi[k] > 1e-12) {
        let shape = &inst.shapes[k];
        let u = lp.add_var(f64::from(shape.count), (0.0, f64::INFINITY));
        let mut terms: Vec<(Variable, f64)> = w
            .iter()
            .zip(&shape.req)
            .filter(|(_, r)| **r > 0.0)
            .map(|(v, r)| (*v, *r))
            .collect();
        terms.push((u, 1.0));
        lp.add_constraint(terms.as_slice(), ComparisonOp::Ge, pi[k]);
    }
    let sol = lp.solve().ok()?;
    Some(w.iter().map(|v| *sol.var_value(*v)).collect())
}

/// The shapes worth anything on type `t`, in branching order (densest first under the last
/// surrogate). Each item's requests are extended by the surrogates: the sum of requests
/// relative to capacity, then (with `w`) the LP-weighted sum.
fn items(inst: &Instance<'_>, t: usize, pi: &[f64], w: Option<&[f64]>) -> Vec<Item> {
    let cap = &inst.types[t].cap;
    let mut items: Vec<Item> = (0..inst.shapes.len())
        .filter(|&k| (inst.allowed)(k, t) && pi[k] > 1e-12)
        .filter_map(|k| {
            let shape = &inst.shapes[k];
            let mut req = shape.req.clone();
            let surrogate = req
                .iter()
                .zip(cap)
                .map(|(r, c)| if *c > 0.0 { r / c } else { 0.0 })
                .sum();
            req.push(surrogate);
            if let Some(w) = w {
                req.push(shape.req.iter().zip(w).map(|(r, w)| r * w).sum());
            }
            let fit = copies(&req[..cap.len()], cap).min(shape.count);
            (fit > 0).then_some(Item {
                k,
                value: pi[k],
                req,
                max: fit,
            })
        })
        .collect();
    let last = items.first().map_or(0, |i| i.req.len() - 1);
    items.sort_by(|a, b| {
        density(b, last)
            .total_cmp(&density(a, last))
            .then(a.k.cmp(&b.k))
    });
    items
}

/// Value per unit of dimension `d` (infinite when the item does not use it).
fn density(it: &Item, d: usize) -> f64 {
    if it.req[d] > 0.0 {
        it.value / it.req[d]
    } else {
        f64::INFINITY
    }
}

/// Item positions by decreasing density in dimension `d`.
fn density_order(items: &[Item], d: usize) -> Vec<usize> {
    let mut order: Vec<usize> = (0..items.len()).collect();
    order.sort_by(|&a, &b| density(&items[b], d).total_cmp(&density(&items[a], d)));
    order
}

/// How many copies of `req` fit in `free`.
fn copies(req: &[f64], free: &[f64]) -> u32 {
    let mut n = u32::MAX;
    for (r, f) in req.iter().zip(free) {
        if *r > 0.0 {
            // A float-to-int cast truncates toward zero and saturates, which is the floor
            // here (negative room gives 0) without a libm call.
            n = n.min((f / r + 1e-9) as u32);
        }
    }
    n
}

struct Search<'a> {
    items: &'a [Item],
    by_density: Vec<Vec<usize>>,
    best: f64,
    best_counts: Vec<u32>,
    counts: Vec<u32>,
    nodes: usize,
    limit: usize,
}

impl Search<'_> {
    fn dfs(&mut self, i: usize, free: &mut [f64], value: f64) {
        self.nodes += 1;
        if value > self.best {
            self.best = value;
            self.best_counts.clone_from(&self.counts);
        }
        if i == self.items.len()
            || self.nodes >= self.limit
            || value + self.bound(i, free) <= self.best + 1e-12
        {
            return;
        }
        let it = &self.items[i];
        let max = copies(&it.req, free).min(it.max);
        for n in (0..=max).rev() {
            let m = f64::from(n);
            for (f, r) in free.iter_mut().zip(&it.req) {
                *f -= r * m;
            }
            self.counts[i] = n;
            self.dfs(i + 1, free, value + it.value * m);
            self.counts[i] = 0;
            for (f, r) in free.iter_mut().zip(&it.req) {
                *f += r * m;
            }
            if self.nodes >= self.limit {
                return;
            }
        }
    }

    /// What items `i..` can still add: the least of the bounded fractional knapsacks over
    /// each dimension (the surrogate included).
    fn bound(&self, i: usize, free: &[f64]) -> f64 {
        self.by_density
            .iter()
            .enumerate()
            .map(|(d, order)| self.fractional(d, order, i, free))
            .fold(f64::INFINITY, f64::min)
    }

    fn fractional(&self, d: usize, order: &[usize], i: usize, free: &[f64]) -> f64 {
        let mut room = free[d].max(0.0);
        let mut value = 0.0;
        for &j in order.iter().filter(|&&j| j >= i) {
            let it = &self.items[j];
            let avail = f64::from(copies(&it.req, free).min(it.max));
            let r = it.req[d];
            if r <= 0.0 {
                value += it.value * avail;
                continue;
            }
            let take = avail.min(room / r);
            value += it.value * take;
            room -= take * r;
            if room <= 1e-12 {
                break;
            }
        }
        value
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::confpack::{NodeType, Shape};

    fn best(shapes: &[Shape], cap: Vec<f64>, pi: &[f64]) -> Best {
        let types = [NodeType { cap, price: 1.0 }];
        let inst = Instance {
            shapes,
            types: &types,
            allowed: &|_, _| true,
        };
        solve(&inst, 0, pi, 1_000_000)
    }

    fn shape(req: &[f64], count: u32) -> Shape {
        Shape {
            req: req.to_vec(),
            count,
        }
    }

    #[test]
    fn counts_are_capped_by_what_is_pending() {
        let b = best(&[shape(&[1.0, 1.0], 3)], vec![10.0, 10.0], &[2.0]);
        assert_eq!(b.counts, vec![3]);
        assert!((b.value - 6.0).abs() < 1e-9 && b.exact);
    }

    #[test]
    fn the_integer_optimum_beats_the_density_greedy() {
        // Densest first takes one 6-unit item (value 7) and wastes 4; two 5s are worth 10.
        let shapes = [shape(&[6.0], 5), shape(&[5.0], 5)];
        let b = best(&shapes, vec![10.0], &[7.0, 5.0]);
        assert_eq!(b.counts, vec![0, 2]);
        assert!((b.value - 10.0).abs() < 1e-9);
    }

    #[test]
    fn every_dimension_binds() {
        // cpu-heavy and memory-heavy pods complement each other on a balanced node.
        let shapes = [shape(&[3.0, 1.0], 4), shape(&[1.0, 3.0], 4)];
        let b = best(&shapes, vec![8.0, 8.0], &[1.0, 1.0]);
        assert_eq!(b.counts, vec![2, 2]);
    }

    #[test]
    fn many_small_shapes_finish_exactly_on_a_large_node() {
        let shapes: Vec<Shape> = (0..30)
            .map(|k| {
                shape(
                    &[
                        0.1 + 0.05 * f64::from(k % 5),
                        0.1 * f64::from(1 + k / 5),
                        1.0,
                    ],
                    5,
                )
            })
            .collect();
        let pi: Vec<f64> = (0..30).map(|k| 0.01 + 0.001 * f64::from(k)).collect();
        let b = best(&shapes, vec![8.0, 12.0, 58.0], &pi);
        assert!(b.exact, "search cut short");
        assert!(b.counts.iter().sum::<u32>() <= 58);
    }
}
