//! Emptiness: nodes without pods worth rescheduling are deleted, most expensive first, while
//! their pools' `Empty` budgets last. It runs for every consolidation policy, once
//! `consolidateAfter` has passed (never for `consolidateAfter: Never` or static pools).

use super::consolidation::eligibility;
use crate::disruption::pass::Pass;
use crate::plan::Method;

/// Plans one delete per empty candidate within budget; true when it planned any.
pub fn run(pass: &mut Pass<'_>) -> bool {
    let mut order = Vec::new();
    for i in pass.open().collect::<Vec<_>>() {
        if !pass.cands[i].is_empty() {
            continue;
        }
        let block = pass
            .blocked(i, Method::Emptiness)
            .or_else(|| eligibility(&pass.cands[i], pass.snap.now, false));
        match block {
            Some(b) => pass.note(i, b),
            None => order.push(i),
        }
    }
    pass.sort_by_savings(&mut order);
    let mut planned = false;
    for i in order {
        if pass.budget_left(i, Method::Emptiness) == 0 {
            let b = pass.budget_block(i, Method::Emptiness);
            pass.note(i, b);
            continue;
        }
        pass.commit(Method::Emptiness, &[i], Vec::new(), Vec::new());
        planned = true;
    }
    planned
}
