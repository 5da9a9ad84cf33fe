//! Disruption budgets, computed as Karpenter does: a budget is active when it has no
//! schedule or its cron window covers `now`; a percentage rounds up; the allowance for a
//! reason is the minimum over the active budgets that apply to it, minus the pool's nodes
//! already disrupting (NotReady or being deleted, for any reason).

use crate::cron::Cron;
use crate::model::{Budget, BudgetNodes, DisruptionReason, NodePool, Timestamp};
use crate::plan::PoolBudget;

/// What one budget allows at `now` for a pool of `nodes` nodes: `u32::MAX` when inactive,
/// 0 when its schedule is invalid (it fails closed).
pub fn budget_allows(b: &Budget, now: Timestamp, nodes: u32) -> u32 {
    if let Some(schedule) = &b.schedule {
        let Some(duration) = b.duration else {
            return 0;
        };
        match Cron::parse(schedule) {
            Ok(c) if c.active(now, duration) => {}
            Ok(_) => return u32::MAX,
            Err(_) => return 0,
        }
    }
    match b.nodes {
        BudgetNodes::Count(n) => n,
        BudgetNodes::Percent(p) => {
            let scaled = u64::from(p.min(100)) * u64::from(nodes);
            scaled.div_ceil(100) as u32
        }
    }
}

/// Karpenter's `GetAllowedDisruptionsByReason`: the minimum over the budgets whose reasons
/// are empty or include `reason` (`u32::MAX` when none is active), before subtracting nodes
/// already disrupting.
pub fn allowed_by_reason(
    pool: &NodePool,
    now: Timestamp,
    nodes: u32,
    reason: DisruptionReason,
) -> u32 {
    pool.disruption
        .budgets
        .iter()
        .filter(|b| b.reasons.is_empty() || b.reasons.contains(&reason))
        .map(|b| budget_allows(b, now, nodes))
        .min()
        .unwrap_or(u32::MAX)
}

/// Per-pool node counts a budget is computed from.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PoolCount {
    /// Managed, initialized nodes that are not terminating.
    pub nodes: u32,
    /// Of those, nodes NotReady or being deleted.
    pub disrupting: u32,
}

/// The allowance of every pool and reason (pools sorted by name, reasons in
/// [`DisruptionReason::ALL`] order).
pub fn pool_budgets<'a>(
    pools: impl IntoIterator<Item = (&'a NodePool, PoolCount)>,
    now: Timestamp,
) -> Vec<PoolBudget> {
    let mut out = Vec::new();
    for (pool, count) in pools {
        for reason in DisruptionReason::ALL {
            let allowed = allowed_by_reason(pool, now, count.nodes, reason);
            out.push(PoolBudget {
                node_pool: pool.name.clone(),
                reason,
                // No more than the pool has: an unlimited budget reads as "all of them".
                allowed: allowed.min(count.nodes).saturating_sub(count.disrupting),
                nodes: count.nodes,
                disrupting: count.disrupting,
            });
        }
    }
    out.sort_by(|a, b| a.node_pool.cmp(&b.node_pool).then(a.reason.cmp(&b.reason)));
    out
}

/// Remaining allowances while a pass plans commands.
#[derive(Clone, Debug, Default)]
pub struct Ledger {
    left: Vec<PoolBudget>,
}

impl Ledger {
    pub fn new(budgets: &[PoolBudget]) -> Self {
        Ledger {
            left: budgets.to_vec(),
        }
    }

    /// What is left for `pool` and `reason` (`u32::MAX` for an unknown pool).
    pub fn left(&self, pool: &str, reason: DisruptionReason) -> u32 {
        self.left
            .iter()
            .find(|b| b.node_pool == pool && b.reason == reason)
            .map_or(u32::MAX, |b| b.allowed)
    }

    /// Spends one disruption of `pool` against `reason` only.
    pub fn spend(&mut self, pool: &str, reason: DisruptionReason) {
        for b in self
            .left
            .iter_mut()
            .filter(|b| b.node_pool == pool && b.reason == reason)
        {
            b.allowed = b.allowed.saturating_sub(1);
        }
    }

    /// A node of `pool` starts disrupting outside any budget (expiry): it counts against
    /// every reason, as Karpenter counts deleting nodes.
    pub fn spend_all(&mut self, pool: &str) {
        for b in self.left.iter_mut().filter(|b| b.node_pool == pool) {
            b.allowed = b.allowed.saturating_sub(1);
        }
    }
}

#[cfg(test)]
#[path = "budgets_tests.rs"]
mod tests;
