//! The summary of a plan: counts of pods, claims and disruptions, cost and savings.

use crate::plan::Plan;

/// Fills the plan's summary; `pending` counts the pending pods it was planned for.
pub(crate) fn summarize(plan: &mut Plan, pending: usize) {
    let cost = round6(plan.cost());
    let scheduled =
        plan.launches.iter().map(|l| l.pods.len()).sum::<usize>() + plan.nominations.len();
    let s = &mut plan.summary;
    s.pending_pods = pending;
    s.scheduled_pods = scheduled;
    s.unschedulable_pods = plan.unschedulable.len();
    s.new_node_claims = plan.launches.len();
    s.new_hourly_cost = cost;
    s.disruptions = plan.disruptions.len();
    s.disrupted_node_claims = plan.disruptions.iter().map(|d| d.node_claims.len()).sum();
    s.savings_per_hour = round6(
        plan.disruptions
            .iter()
            .map(|d| d.savings_per_hour)
            .sum::<f64>()
            + 0.0,
    );
}

fn round6(x: f64) -> f64 {
    (x * 1e6).round() / 1e6 + 0.0
}
