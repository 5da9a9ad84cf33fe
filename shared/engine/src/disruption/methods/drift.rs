//! Drift: drifted candidates are replaced, empty ones first, then the longest drifted, while
//! their pools' `Drifted` budgets last. Empty ones are deleted together; otherwise the first
//! candidate whose pods all fit on the remaining nodes plus any number of new NodeClaims is
//! replaced (one command per pass, as Karpenter). Drift runs for pools with
//! `consolidateAfter: Never` too, and a termination grace period on the claim lets it past
//! pod-level blocks (the grace period bounds the drain).
//!
//! A drifted node of a static pool (`replicas`) is replaced one for one by a NodeClaim of the
//! pool's template, launched first, as Karpenter's StaticDrift does: within the `Drifted`
//! budget, never while the pool is scaling down, and never past `limits.nodes`.

use crate::disruption::candidates::Block;
use crate::disruption::pass::Pass;
use crate::model::Options;
use crate::plan::{Launch, Method, SkipKind};

/// Plans drift commands within budget; true when it planned any.
pub fn run(pass: &mut Pass<'_>) -> bool {
    let mut order: Vec<usize> = pass
        .open()
        .filter(|&i| pass.cands[i].drift.is_some())
        .collect();
    order.sort_by(|&a, &b| {
        let (ca, cb) = (&pass.cands[a], &pass.cands[b]);
        cb.is_empty()
            .cmp(&ca.is_empty())
            .then(ca.drift_since.cmp(&cb.drift_since))
            .then(ca.name().cmp(cb.name()))
    });
    let mut planned = false;
    for i in order {
        if let Some(b) = pass.blocked(i, Method::Drift) {
            pass.note(i, b);
            continue;
        }
        if pass.budget_left(i, Method::Drift) == 0 {
            let b = pass.budget_block(i, Method::Drift);
            pass.note(i, b);
            continue;
        }
        if pass.cands[i].pool.replicas.is_some() {
            match static_replacement(pass, i) {
                Ok(l) => {
                    pass.commit(Method::Drift, &[i], vec![l], Vec::new());
                    planned = true;
                }
                Err(b) => pass.note(i, b),
            }
            continue;
        }
        if pass.cands[i].movable.is_empty() {
            pass.commit(Method::Drift, &[i], Vec::new(), Vec::new());
            planned = true;
            continue;
        }
        if planned {
            // Empty drifted nodes went first; the rest wait for the next pass.
            continue;
        }
        if !pass.can_simulate() {
            continue;
        }
        let out = pass.simulate(&[i]);
        match out.unplaced.into_iter().next() {
            Some((pod, why)) => pass.note(
                i,
                (
                    SkipKind::PodsDoNotFit,
                    format!("pod {pod} would fit nowhere else: {why}"),
                ),
            ),
            None => {
                pass.commit(Method::Drift, &[i], out.launches, out.nominations);
                planned = true;
            }
        }
    }
    planned
}

/// The replacement of drifted candidate `i` of a static pool, or why there is none now.
fn static_replacement(pass: &Pass<'_>, i: usize) -> Result<Launch, Block> {
    let pool = pass.cands[i].pool;
    let static_block = |why: &str| {
        (
            SkipKind::StaticPool,
            format!("static NodePool {} {why}", pool.name),
        )
    };
    let (live, _) = crate::statics::counts(pass.snap, &pool.name);
    if live > pool.replicas.unwrap_or_default() {
        return Err(static_block("is scaling down to its replicas"));
    }
    let staged = pass
        .commands
        .iter()
        .flat_map(|c| &c.replacements)
        .filter(|l| l.node_pool == pool.name)
        .count() as i64;
    let ix = crate::index::resource_index(pass.snap);
    let pc = crate::pools::prepare_one(pass.snap, pool, &ix);
    if pc.nodes_left.is_some_and(|n| n - staged < 1) {
        return Err(static_block(
            "is at its node limit and cannot stage a replacement",
        ));
    }
    let opts = Options {
        max_instance_types: pass.opts.max_instance_types,
        seed: pass.opts.seed,
        min_values_policy: pass.opts.min_values_policy,
        ..Options::default()
    };
    let mut names = pass.names.clone();
    crate::statics::template_launch(&pc, &opts, &mut names)
        .map_err(|e| (SkipKind::PodsDoNotFit, e.to_string()))
}
