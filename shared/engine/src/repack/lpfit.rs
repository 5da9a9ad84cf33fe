//! LP-guided packing for cost repacking: solve the configuration LP of a problem (whole pods
//! per node, fractional node counts) and round it down — each pattern is opened as many whole
//! times as the optimum uses it — then re-solve what is left. Once no pattern is used a whole
//! time, two completions are offered: the dual-guided greedy at the last dual prices, and
//! further dives that open the most valuable pattern once each. The work is bounded by the
//! number of shapes, columns, column-generation rounds and dives, never by the pod count.

use super::shapes::{Opened, Problem, repeat, take};
use crate::confpack::{Budget, Instance, NodeType, Pattern, Shape, greedy, solve_from};

/// Column-generation rounds and knapsack search per solve, for up to
/// [`FULL_DIVES_SHAPES`] shapes; a knapsack search node costs in proportion to the shapes,
/// so larger problems search proportionally fewer nodes.
const BUDGET: Budget = Budget {
    iterations: 40,
    search: 600,
};
const MIN_SEARCH: usize = 60;
const MIN_ITERATIONS: usize = 10;

fn budget(shapes: usize) -> Budget {
    let scaled =
        |full: usize, min: usize| (full * FULL_DIVES_SHAPES / shapes.max(1)).clamp(min, full);
    Budget {
        iterations: scaled(BUDGET.iterations, MIN_ITERATIONS),
        search: scaled(BUDGET.search, MIN_SEARCH),
    }
}
/// Solves per packing for up to [`FULL_DIVES_SHAPES`] shapes; larger problems get
/// proportionally fewer (an LP solve grows with the square of the shapes), at least
/// [`MIN_DIVES`].
const DIVES: usize = 40;
const FULL_DIVES_SHAPES: usize = 32;
const MIN_DIVES: usize = 3;

fn dives(shapes: usize) -> usize {
    let scaled = DIVES * FULL_DIVES_SHAPES * FULL_DIVES_SHAPES / shapes.max(1).pow(2);
    scaled.clamp(MIN_DIVES, DIVES)
}

/// A packing in progress: patterns opened and pods per shape still left.
#[derive(Clone, Debug)]
pub struct Partial {
    pub opened: Vec<Opened>,
    pub left: Vec<u32>,
}

struct Lp<'p> {
    pb: &'p Problem,
    types: Vec<NodeType>,
    budget: Budget,
}

impl Lp<'_> {
    fn shapes(&self, left: &[u32]) -> Vec<Shape> {
        self.pb
            .shapes
            .iter()
            .zip(left)
            .map(|(s, n)| Shape {
                req: s.req.clone(),
                count: *n,
            })
            .collect()
    }

    fn solve(&self, left: &[u32], warm: &[(usize, Vec<u32>)]) -> Option<(Vec<Pattern>, Vec<f64>)> {
        let shapes = self.shapes(left);
        let allowed = |k: usize, c: usize| self.pb.allowed(k, c);
        let inst = Instance {
            shapes: &shapes,
            types: &self.types,
            allowed: &allowed,
        };
        let mut sol = solve_from(&inst, self.budget, warm)?;
        sol.patterns.sort_by(|a, b| {
            b.uses
                .total_cmp(&a.uses)
                .then(a.node_type.cmp(&b.node_type))
        });
        Some((sol.patterns, sol.duals))
    }

    /// The dual-guided greedy on what `p` left.
    fn complete(&self, mut p: Partial, duals: &[f64]) -> Option<Partial> {
        if p.left.iter().all(|n| *n == 0) {
            return Some(p);
        }
        let shapes = self.shapes(&p.left);
        let allowed = |k: usize, c: usize| self.pb.allowed(k, c);
        let inst = Instance {
            shapes: &shapes,
            types: &self.types,
            allowed: &allowed,
        };
        for (col, counts, copies) in greedy(&inst, duals, self.budget.search)? {
            take(&mut p.left, &counts, copies);
            p.opened.push(Opened {
                col,
                counts,
                copies,
            });
        }
        Some(p)
    }
}

/// Packs the problem's pods with column prices `prices`; returns the completed packings
/// (pods no completion could place are left in `left`).
pub fn pack(pb: &Problem, prices: &[f64]) -> Vec<Partial> {
    let lp = Lp {
        pb,
        types: pb
            .caps
            .iter()
            .zip(prices)
            .map(|(cap, price)| NodeType {
                cap: cap.clone(),
                price: *price,
            })
            .collect(),
        budget: budget(pb.shapes.len()),
    };
    let mut p = Partial {
        opened: Vec::new(),
        left: pb.counts(),
    };
    let mut out = Vec::new();
    let mut warm: Vec<(usize, Vec<u32>)> = Vec::new();
    let mut whole = true;
    for _ in 0..dives(pb.shapes.len()) {
        if p.left.iter().all(|n| *n == 0) {
            break;
        }
        let Some((patterns, duals)) = lp.solve(&p.left, &warm) else {
            break;
        };
        let before = p.opened.len();
        for pat in &patterns {
            let copies = ((pat.uses + 1e-6).floor() as u32).min(repeat(&pat.counts, &p.left));
            open(&mut p, pat.node_type, pat.counts.clone(), copies);
        }
        if p.opened.len() == before {
            if whole {
                // The first time rounding stalls, offer the greedy completion too.
                out.extend(lp.complete(p.clone(), &duals));
                whole = false;
            }
            let Some((col, counts)) = best_clipped(&patterns, &duals, &p.left, prices) else {
                break;
            };
            open(&mut p, col, counts, 1);
        }
        warm = patterns
            .into_iter()
            .map(|x| (x.node_type, x.counts))
            .collect();
    }
    if p.left.iter().any(|n| *n > 0) {
        let Some((_, duals)) = lp.solve(&p.left, &warm) else {
            return out;
        };
        out.extend(lp.complete(p, &duals));
    } else {
        out.push(p);
    }
    out
}

fn open(p: &mut Partial, col: usize, counts: Vec<u32>, copies: u32) {
    if copies == 0 || counts.iter().all(|c| *c == 0) {
        return;
    }
    take(&mut p.left, &counts, copies);
    p.opened.push(Opened {
        col,
        counts,
        copies,
    });
}

/// The pattern, clipped to what is left, with the most dual value per dollar.
fn best_clipped(
    patterns: &[Pattern],
    duals: &[f64],
    left: &[u32],
    prices: &[f64],
) -> Option<(usize, Vec<u32>)> {
    let mut best: Option<(f64, usize, Vec<u32>)> = None;
    for p in patterns {
        let counts: Vec<u32> = p
            .counts
            .iter()
            .zip(left)
            .map(|(c, l)| (*c).min(*l))
            .collect();
        if counts.iter().all(|c| *c == 0) {
            continue;
        }
        let value: f64 = counts
            .iter()
            .zip(duals)
            .map(|(c, d)| f64::from(*c) * d.max(1e-9))
            .sum();
        let eff = value / prices[p.node_type];
        if best.as_ref().is_none_or(|b| eff > b.0 * (1.0 + 1e-12)) {
            best = Some((eff, p.node_type, counts));
        }
    }
    best.map(|(_, c, counts)| (c, counts))
}
