//! Emptiness: nodes without pods worth rescheduling are deleted, most expensive first, while
//! their pools' `Empty` budgets last, all in one command as Karpenter plans emptiness. It runs for every consolidation policy, once
//! `consolidateAfter` has passed (never for `consolidateAfter: Never` or static pools).

use super::consolidation::eligibility;
use crate::disruption::pass::Pass;
use crate::plan::Method;

/// Plans one delete of every empty candidate within budget; true when it planned it.
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
    let mut left: std::collections::BTreeMap<String, u32> = Default::default();
    let mut chosen = Vec::new();
    for i in order {
        let pool = pass.cands[i].pool.name.clone();
        let budget = pass.budget_left(i, Method::Emptiness);
        let l = left.entry(pool).or_insert(budget);
        if *l == 0 {
            let b = pass.budget_block(i, Method::Emptiness);
            pass.note(i, b);
            continue;
        }
        *l -= 1;
        chosen.push(i);
    }
    if chosen.is_empty() {
        return false;
    }
    pass.commit(Method::Emptiness, &chosen, Vec::new(), Vec::new());
    true
}
