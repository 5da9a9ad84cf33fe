//! Pod classes and columns for pool-wide repacking. A class is what a pod demands of any node
//! it lands on: its own required node selector and affinity, the pool's requirements, and the
//! topology domains it is already counted in (so spread and affinity counts stay as planned).
//! A pod whose own demands cannot be told apart from its neighbours' keeps its current node's
//! requirements as its class. A column is one instance type at the cheapest offering that a
//! set of classes (its mask) can share, so any mix of those classes on it is launchable:
//! classes only share a column when they also agree on every label no instance type decides
//! (custom NodePool labels, hostname), their "free" requirements.

use rustc_hash::FxHashMap;

use crate::labels;
use crate::podreqs::{Relaxation, strict_requirements};
use crate::pools::{OfferingFilter, PoolCtx};
use crate::prepare::PodInfo;
use crate::requirements::{Requirement, Requirements};
use crate::res::Res;
use crate::scheduler::Run;

/// At most this many classes share one problem (masks are 64-bit); classes beyond it are
/// split into further problems.
pub const MAX_CLASSES: usize = 64;

/// One instance type at one price, open to the classes in `mask`.
#[derive(Clone, Debug)]
pub struct Column {
    pub t: usize,
    pub price: f64,
    pub mask: u64,
}

/// The classes of one pool's repackable pods.
#[derive(Debug, Default)]
pub struct Classes {
    /// Each class's requirements.
    pub reqs: Vec<Requirements>,
    /// Class of each pod (by index into the run's pods), for the pods in the problem.
    pub of: FxHashMap<usize, usize>,
    /// Each class's free-requirements group: only classes of one group share a node.
    pub free: Vec<usize>,
}

impl Classes {
    /// Assigns every pod of `slots` its class.
    pub fn build(run: &Run<'_>, pool: usize, slots: &[usize]) -> Classes {
        let mut c = Classes::default();
        let mut index: FxHashMap<Requirements, usize> = FxHashMap::default();
        for &s in slots {
            for &i in &run.slots[s].pods {
                let reqs = own(run, pool, s, i).unwrap_or_else(|| run.slots[s].reqs.clone());
                let next = index.len();
                let k = *index.entry(reqs.clone()).or_insert(next);
                if k == next {
                    c.reqs.push(reqs);
                }
                c.of.insert(i, k);
            }
        }
        let mut groups: FxHashMap<Requirements, usize> = FxHashMap::default();
        for r in &c.reqs {
            let next = groups.len();
            c.free.push(*groups.entry(free_part(r)).or_insert(next));
        }
        c
    }

    /// The classes split into problems: only classes of one free-requirements group can
    /// share a node, and a problem holds at most [`MAX_CLASSES`] of them.
    pub fn problems(&self) -> Vec<Vec<usize>> {
        let groups = self.free.iter().copied().max().map_or(0, |g| g + 1);
        let mut out = Vec::new();
        for g in 0..groups {
            let members: Vec<usize> = (0..self.reqs.len())
                .filter(|&k| self.free[k] == g)
                .collect();
            out.extend(members.chunks(MAX_CLASSES).map(<[usize]>::to_vec));
        }
        out
    }

    /// The requirements of a node holding `pods`: the pool's and every class's.
    pub fn node_reqs(&self, pods: &[usize]) -> Requirements {
        let mut seen: Vec<usize> = pods.iter().map(|i| self.of[i]).collect();
        seen.sort_unstable();
        seen.dedup();
        let mut r = Requirements::new();
        for k in seen {
            r.add_all(&self.reqs[k]);
        }
        r
    }
}

/// The requirements no instance type or offering decides.
fn free_part(r: &Requirements) -> Requirements {
    let mut out = Requirements::new();
    for (k, req) in r.iter() {
        if k == labels::NODEPOOL || k == labels::HOSTNAME || !labels::is_well_known(k) {
            out.add(k, req.clone());
        }
    }
    out
}

/// A pod's own demands, when they are fully known: no preferred node terms, at most one
/// required term, and a single domain on its node for every topology key it is counted under.
fn own(run: &Run<'_>, pool: usize, s: usize, i: usize) -> Option<Requirements> {
    let p = &run.pods[i];
    let spec = &p.pod.spec;
    if !spec.preferred_terms.is_empty() || spec.required_terms.len() > 1 {
        return None;
    }
    let mut reqs = run.pools[pool].reqs.clone();
    reqs.add_all(&strict_requirements(spec, &Relaxation::default()).ok()?);
    let slot = &run.slots[s];
    for g in topology_groups(p) {
        let key = &run.topo.groups[g].key;
        let domains = slot.domains(key, &slot.reqs, &run.pools);
        let [d] = domains.as_slice() else {
            return None;
        };
        reqs.add(key, Requirement::is_in([d.clone()]));
    }
    Some(reqs)
}

fn topology_groups<'p>(p: &'p PodInfo<'_>) -> impl Iterator<Item = usize> + 'p {
    p.spread
        .iter()
        .chain(&p.affinity)
        .chain(&p.anti)
        .chain(&p.pref_affinity)
        .chain(&p.pref_anti)
        .chain(&p.matching)
        .chain(&p.inverse)
        .copied()
}

/// Every (type, mask) column at its cheapest price, for types with room in `dims`; masks
/// are over `members` (bit `j` is class `members[j]`, all of one free group).
pub fn columns(
    pc: &PoolCtx<'_>,
    classes: &Classes,
    members: &[usize],
    dims: &[usize],
) -> Vec<Column> {
    let mut out = Vec::new();
    let filters: Vec<OfferingFilter<'_>> = members
        .iter()
        .map(|k| OfferingFilter::of(&classes.reqs[*k]))
        .collect();
    for (t, tc) in pc.types.iter().enumerate() {
        if dims.iter().any(|&d| tc.usable.0[d] <= 0) {
            continue;
        }
        let fits: u64 = members
            .iter()
            .enumerate()
            .filter(|(_, k)| tc.matches(&classes.reqs[**k]))
            .fold(0, |m, (j, _)| m | (1 << j));
        if fits == 0 {
            continue;
        }
        let mut seen: Vec<u64> = Vec::new();
        // Repacking prices what can be bought (see `reserve::Purchasable`).
        for o in tc.offerings.iter().filter(|o| o.reservation.is_none()) {
            let mask = filters
                .iter()
                .enumerate()
                .filter(|(j, f)| fits & (1 << j) != 0 && f.admits(o))
                .fold(0u64, |m, (j, _)| m | (1 << j));
            // Offerings are cheapest first: a mask's first offering is its price.
            if mask != 0 && !seen.contains(&mask) {
                seen.push(mask);
                out.push(Column {
                    t,
                    price: o.price,
                    mask,
                });
            }
        }
    }
    out
}

/// Columns no other column beats outright: open to at least the same classes, at most the
/// price, at least the room in every demanded dimension (the LP's candidates).
pub fn undominated(pc: &PoolCtx<'_>, cols: &[Column], dims: &[usize]) -> Vec<Column> {
    let cap = |c: &Column| -> Vec<f64> {
        dims.iter()
            .map(|&d| pc.types[c.t].usable.0[d] as f64)
            .collect()
    };
    let nodes: Vec<crate::confpack::NodeType> = cols
        .iter()
        .map(|c| crate::confpack::NodeType {
            cap: cap(c),
            price: c.price,
        })
        .collect();
    let masks: Vec<u64> = cols.iter().map(|c| c.mask).collect();
    crate::confpack::undominated(&nodes, &masks)
        .into_iter()
        .map(|i| cols[i].clone())
        .collect()
}

/// Indices of the columns not beaten per dollar in every dimension by a column open to at
/// least the same classes (the greedy's candidates); `caps` are the columns' capacities.
pub fn efficient_scaled(cols: &[Column], caps: &[Vec<f64>], dims: &[usize]) -> Vec<usize> {
    let pers: Vec<Vec<f64>> = cols
        .iter()
        .zip(caps)
        .map(|(c, cap)| dims.iter().map(|&d| cap[d] / c.price).collect())
        .collect();
    (0..cols.len())
        .filter(|&b| {
            !cols.iter().enumerate().any(|(a, ca)| {
                a != b
                    && ca.mask & cols[b].mask == cols[b].mask
                    && pers[a].iter().zip(&pers[b]).all(|(x, y)| x >= y)
                    && pers[a].iter().zip(&pers[b]).any(|(x, y)| x > y)
            })
        })
        .collect()
}

/// Resource dimensions the pods request.
pub fn demanded(group: &[usize], pods: &[PodInfo<'_>]) -> Vec<usize> {
    let n = pods[group[0]].req.0.len();
    (0..n)
        .filter(|&d| group.iter().any(|&i| pods[i].req.0[d] > 0))
        .collect()
}

/// The sum of the pods' requests.
pub fn sum(ps: &[usize], pods: &[PodInfo<'_>], dims: usize) -> Res {
    let mut r = Res::zero(dims);
    for &i in ps {
        r.add(&pods[i].req);
    }
    r
}
