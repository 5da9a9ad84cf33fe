//! LP-guided packing for cost repacking: solve the configuration LP of the group (whole pods
//! per node, fractional node counts) and round it down — each pattern is used as many whole
//! times as the optimum uses it — then repeat on what is left. What rounding cannot place is
//! packed by the greedy in `repack`.

use rustc_hash::FxHashMap;

use crate::confpack::{Instance, NodeType, Shape, solve};
use crate::pools::PoolCtx;
use crate::prepare::PodInfo;

/// The LP has one row per shape; beyond this the greedy alone is used.
const MAX_SHAPES: usize = 48;
/// Column-generation rounds per solve, and residual solves.
const ITERATIONS: usize = 80;
const ROUNDS: usize = 3;

/// Bins (type, pods) from the rounded LP, and the pods rounding left over.
pub type Packing = (Vec<(usize, Vec<usize>)>, Vec<usize>);

/// Packs `group` with the dual-guided greedy (prices from the configuration LP).
pub fn dual_greedy(
    pc: &PoolCtx<'_>,
    types: &[(usize, f64)],
    group: &[usize],
    pods: &[PodInfo<'_>],
    dims: &[usize],
) -> Option<Vec<(usize, Vec<usize>)>> {
    let (mut members, lp) = GroupLp::new(pc, types, group, pods, dims)?;
    let inst = lp.instance();
    let sol = solve(&inst, ITERATIONS)?;
    let nodes = crate::confpack::greedy(&inst, &sol.duals)?;
    let mut bins = Vec::new();
    for (t, counts) in nodes {
        take(&mut bins, &mut members, &counts, types[t].0);
    }
    members.iter().all(|(_, m)| m.is_empty()).then_some(bins)
}

/// A group's pods by request vector.
type Members = Vec<(Vec<i64>, Vec<usize>)>;

/// The confpack shapes and node types for one group's pods.
struct GroupLp {
    shapes: Vec<Shape>,
    types: Vec<NodeType>,
}

impl GroupLp {
    fn new(
        pc: &PoolCtx<'_>,
        types: &[(usize, f64)],
        group: &[usize],
        pods: &[PodInfo<'_>],
        dims: &[usize],
    ) -> Option<(Members, Self)> {
        let members = shapes(group, pods, dims);
        if members.len() > MAX_SHAPES || types.is_empty() {
            return None;
        }
        let (shapes, types) = instance(pc, types, &members, dims);
        Some((members, GroupLp { shapes, types }))
    }

    fn instance(&self) -> Instance<'_> {
        Instance {
            shapes: &self.shapes,
            types: &self.types,
            allowed: &any_shape,
        }
    }
}

/// Every node type may host every shape of one group.
fn any_shape(_: usize, _: usize) -> bool {
    true
}

/// The confpack instance for shapes `members` on `types`, scaled so the largest request in
/// each dimension is 1.
fn instance(
    pc: &PoolCtx<'_>,
    types: &[(usize, f64)],
    members: &[(Vec<i64>, Vec<usize>)],
    dims: &[usize],
) -> (Vec<Shape>, Vec<NodeType>) {
    let scale: Vec<f64> = (0..dims.len())
        .map(|d| {
            members
                .iter()
                .map(|(req, _)| req[d] as f64)
                .fold(1.0, f64::max)
        })
        .collect();
    let shape_list: Vec<Shape> = members
        .iter()
        .map(|(req, m)| Shape {
            req: req.iter().zip(&scale).map(|(r, s)| *r as f64 / s).collect(),
            count: m.len() as u32,
        })
        .collect();
    let node_types: Vec<NodeType> = types
        .iter()
        .map(|&(t, price)| NodeType {
            cap: dims
                .iter()
                .zip(&scale)
                .map(|(&d, s)| pc.types[t].usable.0[d] as f64 / s)
                .collect(),
            price,
        })
        .collect();
    (shape_list, node_types)
}

/// Packs `group` onto `types` (type index, price).
pub fn pack(
    pc: &PoolCtx<'_>,
    types: &[(usize, f64)],
    group: &[usize],
    pods: &[PodInfo<'_>],
    dims: &[usize],
) -> Option<Packing> {
    let mut bins = Vec::new();
    let mut left: Vec<usize> = group.to_vec();
    for _ in 0..ROUNDS {
        if left.is_empty() {
            break;
        }
        let (mut b, rest) = round_once(pc, types, &left, pods, dims)?;
        if b.is_empty() {
            break;
        }
        bins.append(&mut b);
        left = rest;
    }
    Some((bins, left))
}

fn round_once(
    pc: &PoolCtx<'_>,
    types: &[(usize, f64)],
    group: &[usize],
    pods: &[PodInfo<'_>],
    dims: &[usize],
) -> Option<Packing> {
    let (mut members, lp) = GroupLp::new(pc, types, group, pods, dims)?;
    let inst = lp.instance();
    let mut sol = solve(&inst, ITERATIONS)?;
    sol.patterns.sort_by(|a, b| {
        b.uses
            .total_cmp(&a.uses)
            .then(a.node_type.cmp(&b.node_type))
    });
    let mut bins = Vec::new();
    for p in &sol.patterns {
        for _ in 0..((p.uses + 1e-6).floor() as usize) {
            if !take(&mut bins, &mut members, &p.counts, types[p.node_type].0) {
                break;
            }
        }
    }
    if bins.is_empty() {
        // Every pattern is used less than once: open the most-used ones once each.
        for p in &sol.patterns {
            take(&mut bins, &mut members, &p.counts, types[p.node_type].0);
        }
    }
    Some((bins, members.into_iter().flat_map(|(_, m)| m).collect()))
}

/// Opens one node of type `t` holding up to `counts` pods of each shape; false when no pod
/// is left for it.
fn take(
    bins: &mut Vec<(usize, Vec<usize>)>,
    members: &mut [(Vec<i64>, Vec<usize>)],
    counts: &[u32],
    t: usize,
) -> bool {
    let mut bin = Vec::new();
    for (k, n) in counts.iter().enumerate() {
        let n = (*n as usize).min(members[k].1.len());
        bin.extend(members[k].1.drain(..n));
    }
    if bin.is_empty() {
        return false;
    }
    bins.push((t, bin));
    true
}

/// Pods grouped by their request vector over `dims`, in a stable order.
fn shapes(group: &[usize], pods: &[PodInfo<'_>], dims: &[usize]) -> Vec<(Vec<i64>, Vec<usize>)> {
    let mut by: FxHashMap<Vec<i64>, Vec<usize>> = FxHashMap::default();
    for &i in group {
        by.entry(dims.iter().map(|&d| pods[i].req.0[d]).collect())
            .or_default()
            .push(i);
    }
    let mut v: Vec<(Vec<i64>, Vec<usize>)> = by.into_iter().collect();
    v.sort();
    v
}
