//! The configuration LP of bin packing with several node types (Gilmore–Gomory), solved by
//! column generation: a column is one node of some type holding a whole number of pods of
//! each shape. Its optimum is a tight lower bound on the hourly cost of hosting the pods
//! (Farley's bound keeps it valid at every iteration), and rounding its solution down gives
//! a near-optimal packing.
//!
//! minilp reports no dual values, so each iteration solves the dual of the restricted master
//! directly (maximise Σ demand·π subject to every known pattern costing at least its value).

mod knapsack;
mod pricing;

use minilp::{ComparisonOp, OptimizationDirection, Problem as Lp, Variable};

pub use pricing::greedy;
use pricing::price;

/// Pods of one shape: their request vector and how many there are.
#[derive(Clone, Debug)]
pub struct Shape {
    pub req: Vec<f64>,
    pub count: u32,
}

/// A node type: its usable capacity and hourly price.
#[derive(Clone, Debug)]
pub struct NodeType {
    pub cap: Vec<f64>,
    pub price: f64,
}

/// A packing problem: which shapes each node type may host is given by `allowed`.
pub struct Instance<'a> {
    pub shapes: &'a [Shape],
    pub types: &'a [NodeType],
    pub allowed: &'a dyn Fn(usize, usize) -> bool,
}

/// One node pattern: type and pods per shape, used `uses` times in the LP optimum.
#[derive(Clone, Debug, PartialEq)]
pub struct Pattern {
    pub node_type: usize,
    pub counts: Vec<u32>,
    pub uses: f64,
}

#[derive(Clone, Debug)]
pub struct Solution {
    /// A valid lower bound on any packing's cost.
    pub lower_bound: f64,
    /// The restricted master's optimum (an upper bound on the LP optimum).
    pub objective: f64,
    pub patterns: Vec<Pattern>,
    /// The last dual prices: what one more pod of each shape is worth.
    pub duals: Vec<f64>,
}

/// Starting patterns per shape.
const INITIAL_PER_SHAPE: usize = 3;

/// How much work one solve may do.
#[derive(Clone, Copy, Debug)]
pub struct Budget {
    /// Column-generation rounds.
    pub iterations: usize,
    /// Branch-and-bound nodes per pricing knapsack; past it the knapsack LP bounds the value.
    pub search: usize,
}

/// Solves the configuration LP by column generation within `budget`.
pub fn solve(inst: &Instance<'_>, budget: Budget) -> Option<Solution> {
    solve_from(inst, budget, &[])
}

/// [`solve`], starting from `warm` patterns too (those that no longer fit the demand are
/// clipped to it). Each round adds the improving patterns as rows of the dual and
/// re-optimises from the previous basis.
pub fn solve_from(
    inst: &Instance<'_>,
    budget: Budget,
    warm: &[(usize, Vec<u32>)],
) -> Option<Solution> {
    let mut patterns: Vec<(usize, Vec<u32>)> = initial(inst);
    for (t, counts) in warm {
        let clipped: Vec<u32> = counts
            .iter()
            .zip(inst.shapes)
            .map(|(c, s)| (*c).min(s.count))
            .collect();
        if clipped.iter().any(|c| *c > 0) && !patterns.iter().any(|p| p.0 == *t && p.1 == clipped) {
            patterns.push((*t, clipped));
        }
    }
    if patterns.is_empty() {
        return None;
    }
    let mut dual = Dual::new(inst, &patterns)?;
    let mut lower = 0.0f64;
    let mut duals = vec![0.0; inst.shapes.len()];
    for _ in 0..budget.iterations {
        let (dual_obj, pi) = dual.values();
        duals.clone_from(&pi);
        let (kappa, found) = price(inst, &pi, budget.search);
        lower = lower.max(dual_obj / kappa.max(1.0));
        let mut added = false;
        for p in found {
            if !patterns.contains(&p) {
                dual = dual.add(inst, &p)?;
                patterns.push(p);
                added = true;
            }
        }
        if !added {
            break;
        }
    }
    let (objective, uses) = primal(inst, &patterns)?;
    let patterns = patterns
        .into_iter()
        .zip(uses)
        .filter(|(_, u)| *u > 1e-9)
        .map(|((node_type, counts), uses)| Pattern {
            node_type,
            counts,
            uses,
        })
        .collect();
    Some(Solution {
        lower_bound: lower,
        objective,
        patterns,
        duals,
    })
}

/// Indices of the types no other type beats outright (at least the capacity in every
/// dimension, for no more money, hosting at least the same shapes). Dropping the others
/// cannot change the optimum.
pub fn undominated(types: &[NodeType], hosts: &[u64]) -> Vec<usize> {
    let beats = |a: usize, b: usize| {
        let (x, y) = (&types[a], &types[b]);
        hosts[a] & hosts[b] == hosts[b]
            && x.price <= y.price
            && x.cap.iter().zip(&y.cap).all(|(p, q)| p >= q)
            && (x.price < y.price || x.cap.iter().zip(&y.cap).any(|(p, q)| p > q) || a < b)
    };
    (0..types.len())
        .filter(|&b| !(0..types.len()).any(|a| a != b && beats(a, b)))
        .collect()
}

/// How many pods of shape `k` fit a node of type `t` on their own.
fn alone(inst: &Instance<'_>, k: usize, t: usize) -> u32 {
    let s = &inst.shapes[k];
    let n = s
        .req
        .iter()
        .zip(&inst.types[t].cap)
        .filter(|(r, _)| **r > 0.0)
        .map(|(r, c)| (c / r + 1e-9).floor())
        .fold(f64::INFINITY, f64::min);
    if n.is_finite() {
        (n.max(0.0) as u32).min(s.count)
    } else {
        s.count
    }
}

/// Single-shape patterns to start from: for each shape, the few types that host it at the
/// lowest price per pod (column generation finds the rest).
fn initial(inst: &Instance<'_>) -> Vec<(usize, Vec<u32>)> {
    let mut out = Vec::new();
    for k in 0..inst.shapes.len() {
        let mut best: Vec<(f64, usize, u32)> = (0..inst.types.len())
            .filter(|&t| (inst.allowed)(k, t))
            .filter_map(|t| {
                let n = alone(inst, k, t);
                (n > 0).then(|| (inst.types[t].price / f64::from(n), t, n))
            })
            .collect();
        best.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        for &(_, t, n) in best.iter().take(INITIAL_PER_SHAPE) {
            let mut counts = vec![0; inst.shapes.len()];
            counts[k] = n;
            out.push((t, counts));
        }
    }
    out
}

/// The restricted dual: max Σ n·π s.t. π·a ≤ price for every pattern, π ≥ 0.
struct Dual {
    pi: Vec<Variable>,
    sol: minilp::Solution,
}

impl Dual {
    fn new(inst: &Instance<'_>, patterns: &[(usize, Vec<u32>)]) -> Option<Dual> {
        let mut lp = Lp::new(OptimizationDirection::Maximize);
        let pi: Vec<Variable> = inst
            .shapes
            .iter()
            .map(|s| lp.add_var(s.count as f64, (0.0, f64::INFINITY)))
            .collect();
        for p in patterns {
            lp.add_constraint(
                row(&pi, &p.1).as_slice(),
                ComparisonOp::Le,
                inst.types[p.0].price,
            );
        }
        let sol = lp.solve().ok()?;
        Some(Dual { pi, sol })
    }

    /// Adds pattern `p`'s row and re-optimises.
    fn add(self, inst: &Instance<'_>, p: &(usize, Vec<u32>)) -> Option<Dual> {
        let expr = row(&self.pi, &p.1);
        let sol = self
            .sol
            .add_constraint(expr.as_slice(), ComparisonOp::Le, inst.types[p.0].price)
            .ok()?;
        Some(Dual { pi: self.pi, sol })
    }

    fn values(&self) -> (f64, Vec<f64>) {
        (
            self.sol.objective(),
            self.pi.iter().map(|v| *self.sol.var_value(*v)).collect(),
        )
    }
}

fn row(pi: &[Variable], counts: &[u32]) -> Vec<(Variable, f64)> {
    counts
        .iter()
        .enumerate()
        .filter(|(_, c)| **c > 0)
        .map(|(k, c)| (pi[k], *c as f64))
        .collect()
}

/// The restricted master: min Σ price·λ s.t. Σ a·λ ≥ n.
fn primal(inst: &Instance<'_>, patterns: &[(usize, Vec<u32>)]) -> Option<(f64, Vec<f64>)> {
    let mut lp = Lp::new(OptimizationDirection::Minimize);
    let lam: Vec<Variable> = patterns
        .iter()
        .map(|(t, _)| lp.add_var(inst.types[*t].price, (0.0, f64::INFINITY)))
        .collect();
    for (k, s) in inst.shapes.iter().enumerate() {
        let terms: Vec<(Variable, f64)> = patterns
            .iter()
            .enumerate()
            .filter(|(_, (_, c))| c[k] > 0)
            .map(|(j, (_, c))| (lam[j], c[k] as f64))
            .collect();
        lp.add_constraint(terms.as_slice(), ComparisonOp::Ge, s.count as f64);
    }
    let sol = lp.solve().ok()?;
    Some((sol.objective(), lam.iter().map(|v| sol[*v]).collect()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inst_solve(shapes: &[Shape], types: &[NodeType]) -> Solution {
        solve(
            &Instance {
                shapes,
                types,
                allowed: &|_, _| true,
            },
            Budget {
                iterations: 50,
                search: 100_000,
            },
        )
        .unwrap()
    }

    #[test]
    fn integral_packing_is_respected() {
        // Pods of 2 cpu on nodes of 3.9 cpu: one per node, never 1.95.
        let shapes = [Shape {
            req: vec![2.0],
            count: 10,
        }];
        let types = [NodeType {
            cap: vec![3.9],
            price: 1.0,
        }];
        let s = inst_solve(&shapes, &types);
        assert!((s.lower_bound - 10.0).abs() < 1e-6, "{s:?}");
    }

    #[test]
    fn complementary_shapes_share_nodes() {
        let shapes = [
            Shape {
                req: vec![3.0, 1.0],
                count: 4,
            },
            Shape {
                req: vec![1.0, 3.0],
                count: 4,
            },
        ];
        let types = [NodeType {
            cap: vec![4.0, 4.0],
            price: 1.0,
        }];
        let s = inst_solve(&shapes, &types);
        assert!((s.lower_bound - 4.0).abs() < 1e-6, "{s:?}");
        assert!((s.objective - 4.0).abs() < 1e-6);
    }

    #[test]
    fn the_cheaper_type_per_pod_wins() {
        let shapes = [Shape {
            req: vec![1.0],
            count: 8,
        }];
        let types = [
            NodeType {
                cap: vec![2.0],
                price: 1.0,
            },
            NodeType {
                cap: vec![8.0],
                price: 3.0,
            },
        ];
        let s = inst_solve(&shapes, &types);
        assert!((s.lower_bound - 3.0).abs() < 1e-6, "{s:?}");
    }
}
