//! A lower bound on the hourly cost of hosting groups of identical pods: the configuration
//! LP (whole pods per node, fractional node counts) over every offering the groups may use,
//! solved by the engine's column generation with Farley's bound.

use kerf_engine::confpack::{Budget, Instance, NodeType, Shape, solve, undominated};
use minilp::{ComparisonOp, OptimizationDirection, Problem};

/// Resources the bound tracks: cpu, memory, pods.
pub const DIMS: usize = 3;

/// One offering a group might use.
#[derive(Clone, Debug)]
pub struct Column {
    pub price: f64,
    pub usable: [f64; DIMS],
    /// Bit g set when group g may use this column.
    pub groups: u64,
}

/// Identical pods with the same placement options: one pod's request and how many.
#[derive(Clone, Debug)]
pub struct Group {
    pub req: [f64; DIMS],
    pub count: u32,
}

/// The better of two valid bounds: the configuration LP (tight when nodes hold few pods) and
/// the plain LP relaxation (pods divisible; exact in every dimension at once).
pub fn lower_bound(groups: &[Group], columns: &[Column]) -> Result<f64, String> {
    let lp = configuration_bound(groups, columns)?.max(divisible_bound(groups, columns)?);
    Ok(match groups {
        [g] => lp.max(single_group_optimum(g, columns)),
        _ => lp,
    })
}

/// The exact optimum for one group of identical pods: the cheapest way to cover its count
/// with whole nodes, each column holding as many pods as fit (dynamic programming over the
/// count). The relaxation it solves is the same as the LPs' minus their fractional nodes.
pub fn single_group_optimum(g: &Group, columns: &[Column]) -> f64 {
    let per: Vec<(u32, f64)> = columns
        .iter()
        .filter(|c| c.groups & 1 != 0)
        .filter_map(|c| {
            let n = (0..DIMS)
                .filter(|&d| g.req[d] > 0.0)
                .map(|d| (c.usable[d] / g.req[d] + 1e-9).floor())
                .fold(f64::INFINITY, f64::min);
            (n >= 1.0).then(|| (n.min(f64::from(g.count)) as u32, c.price))
        })
        .collect();
    let n = g.count as usize;
    let mut best = vec![f64::INFINITY; n + 1];
    best[0] = 0.0;
    for k in 1..=n {
        for &(fit, price) in &per {
            let rest = k.saturating_sub(fit as usize);
            best[k] = best[k].min(best[rest] + price);
        }
    }
    best[n]
}

/// The LP relaxation with divisible pods: min Σ price·y s.t. each group is fully assigned and
/// no column's capacity is exceeded. Columns beaten per dollar in every dimension by one that
/// serves at least the same groups are dropped first (that cannot change this optimum).
pub fn divisible_bound(groups: &[Group], columns: &[Column]) -> Result<f64, String> {
    let per = |c: &Column| c.usable.map(|u| u / c.price);
    let mut sorted: Vec<&Column> = columns
        .iter()
        .filter(|c| c.usable.iter().all(|u| *u > 0.0))
        .collect();
    sorted.sort_by(|a, b| per(b)[0].total_cmp(&per(a)[0]));
    let mut cols: Vec<&Column> = Vec::new();
    for c in sorted {
        let pc = per(c);
        if !cols
            .iter()
            .any(|k| k.groups & c.groups == c.groups && (0..DIMS).all(|r| per(k)[r] >= pc[r]))
        {
            cols.push(c);
        }
    }
    let mut pb = Problem::new(OptimizationDirection::Minimize);
    let ys: Vec<_> = cols
        .iter()
        .map(|c| pb.add_var(c.price, (0.0, f64::INFINITY)))
        .collect();
    let mut xs: Vec<Vec<(usize, minilp::Variable)>> = vec![Vec::new(); groups.len()];
    for (ci, c) in cols.iter().enumerate() {
        for (g, x) in xs.iter_mut().enumerate() {
            if c.groups & (1 << g) != 0 {
                x.push((ci, pb.add_var(0.0, (0.0, 1.0))));
            }
        }
    }
    for x in &xs {
        let terms: Vec<(minilp::Variable, f64)> = x.iter().map(|(_, v)| (*v, 1.0)).collect();
        pb.add_constraint(terms.as_slice(), ComparisonOp::Eq, 1.0);
    }
    for (ci, c) in cols.iter().enumerate() {
        for r in 0..DIMS {
            let mut terms: Vec<(minilp::Variable, f64)> = vec![(ys[ci], -c.usable[r])];
            for (g, x) in xs.iter().enumerate() {
                if let Some((_, v)) = x.iter().find(|(i, _)| *i == ci) {
                    terms.push((*v, groups[g].req[r] * groups[g].count as f64));
                }
            }
            pb.add_constraint(terms.as_slice(), ComparisonOp::Le, 0.0);
        }
    }
    pb.solve().map(|s| s.objective()).map_err(|e| e.to_string())
}

/// The configuration LP bound (whole pods per node) by column generation.
pub fn configuration_bound(groups: &[Group], columns: &[Column]) -> Result<f64, String> {
    assert!(groups.len() <= 64);
    for g in 0..groups.len() {
        if !columns.iter().any(|c| c.groups & (1 << g) != 0) {
            return Err(format!("group {g} has no column"));
        }
    }
    let all: Vec<NodeType> = columns
        .iter()
        .map(|c| NodeType {
            cap: c.usable.to_vec(),
            price: c.price,
        })
        .collect();
    let hosts: Vec<u64> = columns.iter().map(|c| c.groups).collect();
    let keep = undominated(&all, &hosts);
    let types: Vec<NodeType> = keep.iter().map(|&i| all[i].clone()).collect();
    let masks: Vec<u64> = keep.iter().map(|&i| hosts[i]).collect();
    let shapes: Vec<Shape> = groups
        .iter()
        .map(|g| Shape {
            req: g.req.to_vec(),
            count: g.count,
        })
        .collect();
    let allowed = |k: usize, t: usize| masks[t] & (1 << k) != 0;
    let inst = Instance {
        shapes: &shapes,
        types: &types,
        allowed: &allowed,
    };
    solve(
        &inst,
        Budget {
            iterations: 400,
            search: 20_000,
        },
    )
    .map(|s| s.lower_bound)
    .ok_or_else(|| "no solution".to_string())
}
