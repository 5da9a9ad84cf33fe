//! A lower bound on the hourly cost of hosting a set of pod groups: the LP relaxation of the
//! packing problem (pods divisible, nodes fractional). Columns are offerings (instance type
//! × zone × capacity type) with their usable capacity; a group may only use the offerings
//! its requirements allow. Columns dominated per dollar by another column that serves at
//! least the same groups are dropped first; that cannot change the LP optimum.

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

/// Pods with identical placement options, and their summed requests.
#[derive(Clone, Debug)]
pub struct Group {
    pub demand: [f64; DIMS],
}

/// The LP optimum, or `None` if the LP is infeasible.
pub fn lower_bound(groups: &[Group], columns: &[Column]) -> Option<f64> {
    assert!(groups.len() <= 64);
    let cols = prune(columns);
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
                    terms.push((*v, groups[g].demand[r]));
                }
            }
            pb.add_constraint(terms.as_slice(), ComparisonOp::Le, 0.0);
        }
    }
    pb.solve().ok().map(|s| s.objective())
}

/// Drops columns another column beats per dollar in every dimension while serving a
/// superset of groups.
fn prune(columns: &[Column]) -> Vec<Column> {
    let per = |c: &Column| c.usable.map(|u| u / c.price);
    let mut sorted: Vec<&Column> = columns
        .iter()
        .filter(|c| c.price > 0.0 && c.usable.iter().all(|u| *u > 0.0))
        .collect();
    sorted.sort_by(|a, b| per(b)[0].total_cmp(&per(a)[0]));
    let mut kept: Vec<&Column> = Vec::new();
    for c in sorted {
        let pc = per(c);
        let dominated = kept.iter().any(|k| {
            let pk = per(k);
            k.groups & c.groups == c.groups && (0..DIMS).all(|r| pk[r] >= pc[r])
        });
        if !dominated {
            kept.push(c);
        }
    }
    kept.into_iter().cloned().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_group_one_type_is_demand_over_capacity() {
        let g = [Group {
            demand: [10.0, 20.0, 5.0],
        }];
        let c = [Column {
            price: 1.0,
            usable: [4.0, 16.0, 100.0],
            groups: 1,
        }];
        let b = lower_bound(&g, &c).unwrap();
        assert!((b - 2.5).abs() < 1e-6, "{b}");
    }
}
