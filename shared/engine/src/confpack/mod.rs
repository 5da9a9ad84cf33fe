//! The configuration LP of bin packing with several node types (Gilmore–Gomory), solved by
//! column generation: a column is one node of some type holding a whole number of pods of
//! each shape. Its optimum is a tight lower bound on the hourly cost of hosting the pods
//! (Farley's bound keeps it valid at every iteration), and rounding its solution down gives
//! a near-optimal packing.
//!
//! minilp reports no dual values, so each iteration solves the dual of the restricted master
//! directly (maximise Σ demand·π subject to every known pattern costing at least its value).

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

/// Solves the configuration LP by column generation, for at most `iterations` rounds.
pub fn solve(inst: &Instance<'_>, iterations: usize) -> Option<Solution> {
    let mut patterns: Vec<(usize, Vec<u32>)> = initial(inst);
    if patterns.is_empty() {
        return None;
    }
    let mut lower = 0.0f64;
    let mut duals = vec![0.0; inst.shapes.len()];
    for _ in 0..iterations {
        let (dual_obj, pi) = dual(inst, &patterns)?;
        duals.clone_from(&pi);
        let (kappa, found) = price(inst, &pi);
        lower = lower.max(dual_obj / kappa.max(1.0));
        if found.is_empty() {
            break;
        }
        let before = patterns.len();
        for p in found {
            if !patterns.contains(&p) {
                patterns.push(p);
            }
        }
        if patterns.len() == before {
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

/// One single-shape pattern per (type, shape) that fits.
fn initial(inst: &Instance<'_>) -> Vec<(usize, Vec<u32>)> {
    let mut out = Vec::new();
    for t in 0..inst.types.len() {
        for k in 0..inst.shapes.len() {
            let n = if (inst.allowed)(k, t) {
                alone(inst, k, t)
            } else {
                0
            };
            if n > 0 {
                let mut counts = vec![0; inst.shapes.len()];
                counts[k] = n;
                out.push((t, counts));
            }
        }
    }
    out
}

/// The restricted dual: max Σ n·π s.t. π·a ≤ price for every pattern, π ≥ 0.
fn dual(inst: &Instance<'_>, patterns: &[(usize, Vec<u32>)]) -> Option<(f64, Vec<f64>)> {
    let mut lp = Lp::new(OptimizationDirection::Maximize);
    let pi: Vec<Variable> = inst
        .shapes
        .iter()
        .map(|s| lp.add_var(s.count as f64, (0.0, f64::INFINITY)))
        .collect();
    for (t, counts) in patterns {
        let terms: Vec<(Variable, f64)> = counts
            .iter()
            .enumerate()
            .filter(|(_, c)| **c > 0)
            .map(|(k, c)| (pi[k], *c as f64))
            .collect();
        lp.add_constraint(terms.as_slice(), ComparisonOp::Le, inst.types[*t].price);
    }
    let sol = lp.solve().ok()?;
    Some((sol.objective(), pi.iter().map(|v| sol[*v]).collect()))
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
            50,
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
