//! Drift: drifted candidates are replaced, empty ones first, then the longest drifted, while
//! their pools' `Drifted` budgets last. Empty ones are deleted together; otherwise the first
//! candidate whose pods all fit on the remaining nodes plus any number of new NodeClaims is
//! replaced (one command per pass, as Karpenter). Drift runs for pools with
//! `consolidateAfter: Never` too, and a termination grace period on the claim lets it past
//! pod-level blocks (the grace period bounds the drain).

use crate::disruption::pass::Pass;
use crate::plan::{Method, SkipKind};

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
