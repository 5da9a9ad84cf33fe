//! Static NodePools (`spec.replicas`, Karpenter's `StaticCapacity` gate): a pool that keeps
//! exactly `replicas` NodeClaims whatever its pods ask for, as Karpenter's static
//! provisioning and deprovisioning controllers do.
//!
//! - **Up**: while the pool has fewer claims than `replicas` (deleting ones count, so a node
//!   on its way out is replaced once it is gone), launch the difference, each claim offering
//!   every instance type the pool's requirements allow, cheapest first; `limits.nodes` is
//!   the only limit and stops the launches short.
//! - **Down**: while it has more live claims than `replicas`, delete the surplus: claims not
//!   launched yet first, then empty nodes (DaemonSet pods only, none `do-not-disrupt`), then
//!   the rest, nodes with an active `do-not-disrupt` pod last, a higher
//!   `karpenter.sh/deprovisioning-priority` first, then the lowest disruption cost.
//!
//! Static pools launch nothing for pending pods (see `open`), are never consolidated, and
//! their drifted nodes are replaced one for one (see `disruption::methods::drift`).

use rustc_hash::FxHashSet;
use serde::Serialize;

use crate::finalize::{LaunchError, name, options_launch};
use crate::min_values::{min_values_satisfied, relax_min_values};
use crate::model::{MinValuesPolicy, NodeClaim, NodePool, Options, Snapshot};
use crate::plan::Launch;
use crate::pod_rules::{do_not_disrupt, eviction_cost, is_daemon};
use crate::pools::{PoolCtx, TypeCtx};

/// The NodeClaim annotation that orders a static pool's surplus (higher goes first).
pub const DEPROVISIONING_PRIORITY: &str = "karpenter.sh/deprovisioning-priority";

/// What keeping the static pools at their replica counts takes.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct StaticPlan {
    pub launches: Vec<Launch>,
    pub removals: Vec<Removal>,
    /// Pools `limits.nodes` keeps below `replicas`.
    pub at_limit: Vec<AtLimit>,
    /// Pools that cannot launch at all, with why.
    pub errors: Vec<(String, LaunchError)>,
}

/// A surplus NodeClaim to delete.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Removal {
    pub node_claim: String,
    pub node_pool: String,
}

/// A static pool short of its replicas because of `limits.nodes`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct AtLimit {
    pub node_pool: String,
    pub replicas: i64,
    pub nodes: i64,
}

/// Plans the launches and removals that bring every static pool to its replica count.
pub fn plan(snap: &Snapshot, opts: &Options) -> StaticPlan {
    let ix = crate::index::resource_index(snap);
    let pools = crate::pools::prepare(snap, &ix);
    let mut taken: FxHashSet<String> = snap.node_claims.iter().map(|c| c.name.clone()).collect();
    let mut out = StaticPlan::default();
    for pc in pools.iter().filter(|p| p.np.replicas.is_some()) {
        let replicas = pc.np.replicas.unwrap_or_default().max(0);
        let claims: Vec<&NodeClaim> = snap
            .node_claims
            .iter()
            .filter(|c| c.node_pool == pc.np.name)
            .collect();
        let (live, total) = counts(snap, &pc.np.name);
        if total < replicas && pc.np.active() {
            up(pc, opts, replicas, total, &mut taken, &mut out);
        } else if live > replicas {
            let surplus = (live - replicas) as usize;
            out.removals.extend(
                surplus_claims(snap, pc.np, &claims, surplus)
                    .into_iter()
                    .map(|c| Removal {
                        node_claim: c.name.clone(),
                        node_pool: pc.np.name.clone(),
                    }),
            );
        }
    }
    out
}

/// A pool's NodeClaims: those not being deleted, and all of them.
pub(crate) fn counts(snap: &Snapshot, pool: &str) -> (i64, i64) {
    let mine = snap.node_claims.iter().filter(|c| c.node_pool == pool);
    let live = mine.clone().filter(|c| !c.deleting).count() as i64;
    (live, mine.count() as i64)
}

fn up(
    pc: &PoolCtx<'_>,
    opts: &Options,
    replicas: i64,
    total: i64,
    taken: &mut FxHashSet<String>,
    out: &mut StaticPlan,
) {
    let want = replicas - total;
    let room = pc.nodes_left.map_or(want, |n| n.clamp(0, want));
    if room < want {
        out.at_limit.push(AtLimit {
            node_pool: pc.np.name.clone(),
            replicas,
            nodes: total,
        });
    }
    for _ in 0..room {
        match template_launch(pc, opts, taken) {
            Ok(l) => out.launches.push(l),
            Err(e) => {
                out.errors.push((pc.np.name.clone(), e));
                return;
            }
        }
    }
}

/// One NodeClaim of a static pool: every instance type its requirements allow (at most
/// `max_instance_types`, cheapest first), no pod requests.
pub(crate) fn template_launch(
    pc: &PoolCtx<'_>,
    opts: &Options,
    taken: &mut FxHashSet<String>,
) -> Result<Launch, LaunchError> {
    let pool = || pc.name().to_string();
    if let Some(why) = &pc.unusable {
        return Err(LaunchError::Unusable {
            pool: pool(),
            why: why.clone(),
        });
    }
    let types: Vec<&TypeCtx<'_>> = pc
        .compatible(&pc.reqs)
        .iter()
        .map(|&(t, _)| &pc.types[t])
        .take(opts.max_instance_types)
        .collect();
    let mut reqs = pc.reqs.clone();
    let relaxed = match min_values_satisfied(&pc.reqs, &types) {
        Ok(()) => false,
        Err(_) if opts.min_values_policy == MinValuesPolicy::BestEffort => {
            relax_min_values(&mut reqs, &types)
        }
        Err(err) => return Err(LaunchError::MinValues { pool: pool(), err }),
    };
    let best = types
        .first()
        .ok_or_else(|| LaunchError::NoTypeOffered { pool: pool() })?;
    let mut l = options_launch(pc, best, &types, reqs, &pc.reqs, relaxed)?;
    l.node_claim = name(pc.name(), opts.seed, taken);
    Ok(l)
}

/// `karpenter.sh/deprovisioning-priority` (0 when absent or not a number).
fn priority(c: &NodeClaim) -> i64 {
    c.annotations
        .get(DEPROVISIONING_PRIORITY)
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0)
}

/// How a live claim ranks for removal: not launched first, empty first, no do-not-disrupt
/// first, higher priority first, lower disruption cost first.
type Rank = (bool, bool, bool, i64, f64);

fn rank(snap: &Snapshot, c: &NodeClaim) -> Rank {
    let launched = !c.provider_id.is_empty();
    let pods: Vec<_> = snap
        .pods
        .iter()
        .filter(|p| p.node_name.is_some() && p.node_name == c.node_name)
        .collect();
    let protected = pods.iter().any(|p| do_not_disrupt(p, snap.now).is_some());
    let empty = pods.iter().all(|p| is_daemon(p)) && !protected;
    let eviction: f64 = pods.iter().map(|p| eviction_cost(p)).sum();
    let lifetime = c.expire_after.filter(|e| *e > 0).map_or(1.0, |e| {
        ((e - (snap.now - c.created)) as f64 / e as f64).clamp(0.0, 1.0)
    });
    (
        launched,
        !empty,
        protected,
        -priority(c),
        eviction * lifetime,
    )
}

/// The `n` live claims of `pool` to delete first.
fn surplus_claims<'a>(
    snap: &Snapshot,
    pool: &NodePool,
    claims: &[&'a NodeClaim],
    n: usize,
) -> Vec<&'a NodeClaim> {
    let mut live: Vec<(&NodeClaim, Rank)> = claims
        .iter()
        .filter(|c| !c.deleting && c.node_pool == pool.name)
        .map(|&c| (c, rank(snap, c)))
        .collect();
    live.sort_by(|(a, ra), (b, rb)| {
        (ra.0, ra.1, ra.2, ra.3)
            .cmp(&(rb.0, rb.1, rb.2, rb.3))
            .then(ra.4.total_cmp(&rb.4))
            .then(a.name.cmp(&b.name))
    });
    live.into_iter().take(n).map(|(c, _)| c).collect()
}

#[cfg(test)]
#[path = "statics_tests.rs"]
mod tests;
