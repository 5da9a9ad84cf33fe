//! Pods aggregated into shapes (one class, one request vector, how many), and the packing
//! problem over them: the work of every packing step depends on the number of shapes and
//! columns, never on the number of pods.

use rustc_hash::FxHashMap;

use super::classes::Column;
use crate::prepare::PodInfo;

/// A shape's identity: local class and request vector.
type ShapeKey = (usize, Vec<i64>);

/// Pods of one class with one request vector.
#[derive(Clone, Debug)]
pub struct ShapeSet {
    /// Local class index (bit in a column's mask).
    pub class: usize,
    /// Requests in the problem's dimensions, scaled so the largest request of each is 1.
    pub req: Vec<f64>,
    /// The pods, in a stable order.
    pub pods: Vec<usize>,
}

/// One repacking problem: shapes and the columns that may host them.
#[derive(Debug)]
pub struct Problem {
    pub shapes: Vec<ShapeSet>,
    pub cols: Vec<Column>,
    /// Usable capacity of each column, scaled like the requests.
    pub caps: Vec<Vec<f64>>,
}

/// A node pattern opened `copies` times: column and pods per shape on each copy.
#[derive(Clone, Debug, PartialEq)]
pub struct Opened {
    pub col: usize,
    pub counts: Vec<u32>,
    pub copies: u32,
}

impl Problem {
    /// Groups `pods` (with their local class) into shapes over `dims`, and scales.
    pub fn new(
        pods: &[(usize, usize)],
        infos: &[PodInfo<'_>],
        dims: &[usize],
        cols: Vec<Column>,
        usable: impl Fn(usize) -> Vec<i64>,
    ) -> Problem {
        let mut by: FxHashMap<ShapeKey, Vec<usize>> = FxHashMap::default();
        for &(i, class) in pods {
            let req = dims.iter().map(|&d| infos[i].req.0[d]).collect();
            by.entry((class, req)).or_default().push(i);
        }
        let mut keyed: Vec<(ShapeKey, Vec<usize>)> = by.into_iter().collect();
        keyed.sort();
        let scale: Vec<f64> = (0..dims.len())
            .map(|d| {
                keyed
                    .iter()
                    .map(|((_, r), _)| r[d] as f64)
                    .fold(1.0, f64::max)
            })
            .collect();
        let shapes = keyed
            .into_iter()
            .map(|((class, req), pods)| ShapeSet {
                class,
                req: req.iter().zip(&scale).map(|(r, s)| *r as f64 / s).collect(),
                pods,
            })
            .collect();
        let caps = cols
            .iter()
            .map(|c| {
                usable(c.t)
                    .iter()
                    .zip(&scale)
                    .map(|(u, s)| *u as f64 / s)
                    .collect()
            })
            .collect();
        Problem { shapes, cols, caps }
    }

    pub fn counts(&self) -> Vec<u32> {
        self.shapes.iter().map(|s| s.pods.len() as u32).collect()
    }

    pub fn allowed(&self, k: usize, c: usize) -> bool {
        self.cols[c].mask & (1 << self.shapes[k].class) != 0
    }

    /// How many pods of shape `k` fit in `free`.
    pub fn fit(&self, k: usize, free: &[f64]) -> u32 {
        let n = self.shapes[k]
            .req
            .iter()
            .zip(free)
            .filter(|(r, _)| **r > 0.0)
            .map(|(r, f)| (f / r + 1e-9).floor())
            .fold(f64::INFINITY, f64::min);
        if n.is_finite() {
            n.clamp(0.0, f64::from(u32::MAX)) as u32
        } else {
            u32::MAX
        }
    }
}

/// The value-per-dollar greedy over shapes: open the column whose filling (most valuable
/// shapes first) carries the most normalised pending demand per dollar, as many times as
/// that filling repeats. `None` when some pod fits no candidate column.
pub fn greedy(pb: &Problem, candidates: &[usize], mut left: Vec<u32>) -> Option<Vec<Opened>> {
    let dims = pb.caps.first().map_or(0, Vec::len);
    let mut total = vec![0f64; dims];
    for (s, n) in pb.shapes.iter().zip(&left) {
        for (t, r) in total.iter_mut().zip(&s.req) {
            *t += r * f64::from(*n);
        }
    }
    let value: Vec<f64> = pb
        .shapes
        .iter()
        .map(|s| {
            s.req
                .iter()
                .zip(&total)
                .filter(|(_, t)| **t > 0.0)
                .map(|(r, t)| r / t)
                .sum()
        })
        .collect();
    let mut order: Vec<usize> = (0..pb.shapes.len()).collect();
    order.sort_by(|&a, &b| value[b].total_cmp(&value[a]).then(a.cmp(&b)));
    let mut out = Vec::new();
    while left.iter().any(|n| *n > 0) {
        let mut best: Option<(f64, usize, Vec<u32>)> = None;
        for &c in candidates {
            let counts = fill(pb, c, &order, &left);
            let v: f64 = counts
                .iter()
                .zip(&value)
                .map(|(n, v)| f64::from(*n) * v)
                .sum();
            if v <= 0.0 {
                continue;
            }
            let eff = v / pb.cols[c].price;
            if best.as_ref().is_none_or(|b| eff > b.0 * (1.0 + 1e-12)) {
                best = Some((eff, c, counts));
            }
        }
        let (_, col, counts) = best?;
        let copies = repeat(&counts, &left);
        take(&mut left, &counts, copies);
        out.push(Opened {
            col,
            counts,
            copies,
        });
    }
    Some(out)
}

/// Fills one node of column `c` with `left` pods, shapes in `order`.
fn fill(pb: &Problem, c: usize, order: &[usize], left: &[u32]) -> Vec<u32> {
    let mut free = pb.caps[c].clone();
    let mut counts = vec![0u32; pb.shapes.len()];
    for &k in order {
        if left[k] == 0 || !pb.allowed(k, c) {
            continue;
        }
        let n = pb.fit(k, &free).min(left[k]);
        if n == 0 {
            continue;
        }
        for (f, r) in free.iter_mut().zip(&pb.shapes[k].req) {
            *f -= r * f64::from(n);
        }
        counts[k] = n;
    }
    counts
}

/// How many times the filling `counts` can be opened from `left`.
pub fn repeat(counts: &[u32], left: &[u32]) -> u32 {
    counts
        .iter()
        .zip(left)
        .filter(|(c, _)| **c > 0)
        .map(|(c, l)| l / c)
        .min()
        .unwrap_or(0)
}

/// Takes `copies` of `counts` from `left`.
pub fn take(left: &mut [u32], counts: &[u32], copies: u32) {
    for (l, c) in left.iter_mut().zip(counts) {
        *l -= c * copies;
    }
}

/// Turns opened patterns into bins of pods: (column, pods).
pub fn bins(pb: &Problem, opened: &[Opened]) -> Vec<(usize, Vec<usize>)> {
    let mut next = vec![0usize; pb.shapes.len()];
    let mut out = Vec::new();
    for o in opened {
        for _ in 0..o.copies {
            let mut pods = Vec::new();
            for (k, n) in o.counts.iter().enumerate() {
                let from = next[k];
                let to = (from + *n as usize).min(pb.shapes[k].pods.len());
                pods.extend_from_slice(&pb.shapes[k].pods[from..to]);
                next[k] = to;
            }
            if !pods.is_empty() {
                out.push((o.col, pods));
            }
        }
    }
    out
}
