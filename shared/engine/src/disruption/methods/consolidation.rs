//! Consolidation: a node whose pods fit on the other nodes is deleted; nodes whose pods fit
//! on the others plus one strictly cheaper node are replaced by it.

use crate::disruption::candidates::{Block, Candidate};
use crate::disruption::pass::Pass;
use crate::model::{ConsolidationPolicy, Timestamp};
use crate::plan::SkipKind;
use crate::time::format_rfc3339;

/// Why a candidate cannot be consolidated at `now` (`underutilized`: consolidation of a
/// non-empty node, which `WhenEmpty` pools and unknown prices rule out), or `None`.
pub fn eligibility(c: &Candidate<'_>, now: Timestamp, underutilized: bool) -> Option<Block> {
    let pool = c.pool;
    if pool.replicas.is_some() {
        return Some((
            SkipKind::StaticPool,
            format!("NodePool {} is static (replicas)", pool.name),
        ));
    }
    let Some(at) = c.consolidatable_at else {
        return Some((
            SkipKind::ConsolidationDisabled,
            format!("NodePool {} has consolidateAfter: Never", pool.name),
        ));
    };
    if underutilized && pool.disruption.policy == ConsolidationPolicy::WhenEmpty {
        return Some((
            SkipKind::WhenEmpty,
            format!(
                "NodePool {} only consolidates empty nodes (WhenEmpty) and it has pods",
                pool.name
            ),
        ));
    }
    if now < at {
        return Some((
            SkipKind::NotConsolidatable,
            format!("not consolidatable until {}", format_rfc3339(at)),
        ));
    }
    if underutilized && c.price.is_none() {
        return Some((
            SkipKind::UnknownPrice,
            "its instance type or offering is not in the catalog, so its price is unknown".into(),
        ));
    }
    None
}

/// Plans consolidation; true when it planned a command.
pub fn run(pass: &mut Pass<'_>) -> bool {
    let now = pass.snap.now;
    for i in pass.open().collect::<Vec<_>>() {
        if pass.cands[i].is_empty() {
            continue;
        }
        if let Some(b) = eligibility(&pass.cands[i], now, true) {
            pass.note(i, b);
        }
    }
    false
}
