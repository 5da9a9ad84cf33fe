//! Expiration, forceful as in Karpenter v1: a NodeClaim past `expireAfter` is deleted
//! whatever its budgets, pods or annotations say; its drain honours PodDisruptionBudgets and
//! do-not-disrupt until the termination grace period runs out. Nothing is launched ahead of
//! it: provisioning places its pods once they are evicted.

use crate::disruption::pass::Pass;
use crate::plan::Method;

/// Plans one delete per expired candidate.
pub fn run(pass: &mut Pass<'_>) {
    let now = pass.snap.now;
    let expired: Vec<usize> = pass
        .open()
        .filter(|&i| pass.cands[i].expires_at.is_some_and(|t| now >= t))
        .collect();
    for i in expired {
        pass.commit(Method::Expiration, &[i], Vec::new(), Vec::new());
    }
}
