//! LP-guided packing for cost repacking: solve the configuration LP of the group (whole pods
//! per node, fractional node counts) and round it down — each pattern is used as many whole
//! times as the optimum uses it — then repeat on what is left. What rounding cannot place is
//! packed by the greedy in `repack`. A shape is one class's pods of one request vector; a
//! node type is a column, open to the classes in its mask.

use rustc_hash::FxHashMap;

use crate::confpack::{Budget, Instance, NodeType, Shape, solve, solve_from};
use crate::pools::PoolCtx;
use crate::prepare::PodInfo;
use crate::repack::classes::{Classes, Column};

/// The LP has one row per shape; beyond this the greedy alone is used.
const MAX_SHAPES: usize = 96;
/// Column-generation rounds and search per solve, and at most this many re-solves.
const BUDGET: Budget = Budget {
    iterations: 80,
    search: 3000,
};
const DIVES: usize = 40;

/// Bins (column, pods) from the rounded LP, and the pods rounding left over.
pub type Packing = (Vec<(usize, Vec<usize>)>, Vec<usize>);

/// What one group's LP is built from.
pub struct Problem<'p, 'a> {
    pub pc: &'p PoolCtx<'a>,
    pub cols: &'p [Column],
    pub classes: &'p Classes,
    pub pods: &'p [PodInfo<'a>],
    pub dims: &'p [usize],
}

/// Packs `group` with the dual-guided greedy (prices from the configuration LP).
pub fn dual_greedy(pb: &Problem<'_, '_>, group: &[usize]) -> Option<Vec<(usize, Vec<usize>)>> {
    let (mut members, lp) = GroupLp::new(pb, group)?;
    let allowed = |k: usize, c: usize| lp.allowed(k, c);
    let inst = lp.instance(&allowed);
    let sol = solve(&inst, BUDGET)?;
    let nodes = crate::confpack::greedy(&inst, &sol.duals, BUDGET.search)?;
    let mut bins = Vec::new();
    for (c, counts) in nodes {
        take(&mut bins, &mut members, &counts, c);
    }
    members.iter().all(|(_, m)| m.is_empty()).then_some(bins)
}

/// A group's pods by (class, request vector).
type Members = Vec<((usize, Vec<i64>), Vec<usize>)>;

/// The confpack shapes and node types for one group's pods.
struct GroupLp {
    shapes: Vec<Shape>,
    types: Vec<NodeType>,
    /// Class of each shape, mask of each type.
    class: Vec<usize>,
    mask: Vec<u64>,
}

impl GroupLp {
    fn new(pb: &Problem<'_, '_>, group: &[usize]) -> Option<(Members, Self)> {
        let members = shapes(group, pb);
        if members.len() > MAX_SHAPES || pb.cols.is_empty() {
            return None;
        }
        let (shapes, types) = instance(pb, &members);
        let lp = GroupLp {
            shapes,
            types,
            class: members.iter().map(|((k, _), _)| *k).collect(),
            mask: pb.cols.iter().map(|c| c.mask).collect(),
        };
        Some((members, lp))
    }

    fn allowed(&self, k: usize, c: usize) -> bool {
        self.mask[c] & (1 << self.class[k]) != 0
    }

    fn instance<'s>(&'s self, allowed: &'s dyn Fn(usize, usize) -> bool) -> Instance<'s> {
        Instance {
            shapes: &self.shapes,
            types: &self.types,
            allowed,
        }
    }
}

/// The confpack instance for `members` on the problem's columns, scaled so the largest
/// request in each dimension is 1.
fn instance(pb: &Problem<'_, '_>, members: &Members) -> (Vec<Shape>, Vec<NodeType>) {
    let scale: Vec<f64> = (0..pb.dims.len())
        .map(|d| {
            members
                .iter()
                .map(|((_, req), _)| req[d] as f64)
                .fold(1.0, f64::max)
        })
        .collect();
    let shape_list: Vec<Shape> = members
        .iter()
        .map(|((_, req), m)| Shape {
            req: req.iter().zip(&scale).map(|(r, s)| *r as f64 / s).collect(),
            count: m.len() as u32,
        })
        .collect();
    let node_types: Vec<NodeType> = pb
        .cols
        .iter()
        .map(|c| NodeType {
            cap: pb
                .dims
                .iter()
                .zip(&scale)
                .map(|(&d, s)| pb.pc.types[c.t].usable.0[d] as f64 / s)
                .collect(),
            price: c.price,
        })
        .collect();
    (shape_list, node_types)
}

/// Packs `group` onto the problem's columns by diving: solve the LP, open every pattern as
/// many whole times as the optimum uses it (or, when none is used a whole time, the most used
/// one once), and re-solve what is left from the previous patterns.
pub fn pack(pb: &Problem<'_, '_>, group: &[usize]) -> Option<Packing> {
    let (mut members, mut lp) = GroupLp::new(pb, group)?;
    let mut bins = Vec::new();
    let mut warm: Vec<(usize, Vec<u32>)> = Vec::new();
    for _ in 0..DIVES {
        if lp.shapes.iter().all(|s| s.count == 0) {
            break;
        }
        let allowed = |k: usize, c: usize| lp.allowed(k, c);
        let inst = lp.instance(&allowed);
        let mut sol = solve_from(&inst, BUDGET, &warm)?;
        sol.patterns.sort_by(|a, b| {
            b.uses
                .total_cmp(&a.uses)
                .then(a.node_type.cmp(&b.node_type))
        });
        let opened = bins.len();
        for p in &sol.patterns {
            for _ in 0..((p.uses + 1e-6).floor() as usize) {
                if !take(&mut bins, &mut members, &p.counts, p.node_type) {
                    break;
                }
            }
        }
        if bins.len() == opened
            && let Some(p) = sol.patterns.first()
        {
            take(&mut bins, &mut members, &p.counts, p.node_type);
        }
        if bins.len() == opened {
            break;
        }
        for (s, (_, m)) in lp.shapes.iter_mut().zip(&members) {
            s.count = m.len() as u32;
        }
        warm = sol
            .patterns
            .into_iter()
            .map(|p| (p.node_type, p.counts))
            .collect();
    }
    Some((bins, members.into_iter().flat_map(|(_, m)| m).collect()))
}

/// Opens one node of column `c` holding up to `counts` pods of each shape; false when no pod
/// is left for it.
fn take(
    bins: &mut Vec<(usize, Vec<usize>)>,
    members: &mut Members,
    counts: &[u32],
    c: usize,
) -> bool {
    let mut bin = Vec::new();
    for (k, n) in counts.iter().enumerate() {
        let n = (*n as usize).min(members[k].1.len());
        bin.extend(members[k].1.drain(..n));
    }
    if bin.is_empty() {
        return false;
    }
    bins.push((c, bin));
    true
}

/// Pods grouped by class and request vector over the problem's dimensions, in a stable order.
fn shapes(group: &[usize], pb: &Problem<'_, '_>) -> Members {
    let mut by: FxHashMap<(usize, Vec<i64>), Vec<usize>> = FxHashMap::default();
    for &i in group {
        let req = pb.dims.iter().map(|&d| pb.pods[i].req.0[d]).collect();
        by.entry((pb.classes.of[&i], req)).or_default().push(i);
    }
    let mut v: Members = by.into_iter().collect();
    v.sort();
    v
}
