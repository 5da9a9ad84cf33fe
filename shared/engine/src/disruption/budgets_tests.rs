use super::*;

// 2026-11-24T02:30:00Z, a Tuesday.
const T: i64 = 1_795_487_400;

fn budget(nodes: BudgetNodes) -> Budget {
    Budget {
        nodes,
        ..Default::default()
    }
}

#[test]
fn percentages_round_up_and_counts_are_taken_as_is() {
    assert_eq!(budget_allows(&budget(BudgetNodes::Percent(10)), T, 5), 1);
    assert_eq!(budget_allows(&budget(BudgetNodes::Percent(10)), T, 10), 1);
    assert_eq!(budget_allows(&budget(BudgetNodes::Percent(10)), T, 11), 2);
    assert_eq!(budget_allows(&budget(BudgetNodes::Percent(0)), T, 11), 0);
    assert_eq!(budget_allows(&budget(BudgetNodes::Count(3)), T, 1), 3);
}

#[test]
fn scheduled_budgets_apply_only_inside_their_window() {
    let mut b = budget(BudgetNodes::Count(0));
    b.schedule = Some("0 2 * * *".into());
    b.duration = Some(3600);
    assert_eq!(budget_allows(&b, T, 10), 0, "opened at 02:00 for an hour");
    assert_eq!(budget_allows(&b, T + 3600, 10), u32::MAX, "closed at 03:00");
    b.schedule = Some("not cron".into());
    assert_eq!(
        budget_allows(&b, T + 3600, 10),
        0,
        "invalid schedules fail closed"
    );
}

#[test]
fn the_minimum_of_the_budgets_for_a_reason_wins() {
    let mut pool = NodePool::default();
    let mut drift_only = budget(BudgetNodes::Count(0));
    drift_only.reasons = vec![DisruptionReason::Drifted];
    pool.disruption.budgets = vec![budget(BudgetNodes::Percent(50)), drift_only];
    assert_eq!(
        allowed_by_reason(&pool, T, 10, DisruptionReason::Drifted),
        0
    );
    assert_eq!(allowed_by_reason(&pool, T, 10, DisruptionReason::Empty), 5);
    pool.disruption.budgets.clear();
    assert_eq!(
        allowed_by_reason(&pool, T, 10, DisruptionReason::Empty),
        u32::MAX
    );
}

#[test]
fn nodes_already_disrupting_count_against_every_reason() {
    let pool = NodePool {
        name: "p".into(),
        ..Default::default()
    };
    let count = PoolCount {
        nodes: 20,
        disrupting: 1,
    };
    let out = pool_budgets([(&pool, count)], T);
    assert_eq!(out.len(), 3);
    assert!(
        out.iter().all(|b| b.allowed == 1),
        "10% of 20 is 2, minus 1: {out:?}"
    );
    let mut ledger = Ledger::new(&out);
    ledger.spend("p", DisruptionReason::Empty);
    assert_eq!(ledger.left("p", DisruptionReason::Empty), 0);
    assert_eq!(ledger.left("p", DisruptionReason::Drifted), 1);
    ledger.spend_all("p");
    assert_eq!(ledger.left("p", DisruptionReason::Drifted), 0);
}
