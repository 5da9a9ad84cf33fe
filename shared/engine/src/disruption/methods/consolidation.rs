//! Consolidation: nodes whose pods fit on the other nodes are deleted; nodes whose pods fit
//! on the others plus one strictly cheaper node are replaced by it (when the cheapest packing
//! of their pods needs more new nodes, Karpenter's packing onto the fewest is tried before the
//! move is given up). Multi-node consolidation searches the longest prefix of the candidates
//! (most savings per unit of disruption first) that one command can remove, with no cap on
//! their number; single-node consolidation then evaluates every candidate and keeps the move
//! saving the most per unit of disruption.

use crate::disruption::candidates::{Block, Candidate};
use crate::disruption::pass::Pass;
use crate::disruption::replace;
use crate::disruption::simulate::Packing;
use crate::model::{ConsolidationPolicy, Timestamp};
use crate::plan::{Launch, Method, Nomination, SkipKind};
use crate::time::format_rfc3339;

/// Balanced consolidation approves a move when its savings fraction is at least this share
/// of its disruption fraction (Karpenter's k = 2).
const BALANCED_MIN_RATIO: f64 = 0.5;
/// Karpenter's multi-node consolidation considers at most this many candidates.
const KARPENTER_MULTI_CANDIDATES: usize = 100;

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

/// What one consolidation move does: the replacements (none for a delete) and where the
/// moved pods land on existing capacity.
pub(crate) type Move = (Vec<Launch>, Vec<Nomination>);

/// Plans consolidation; the method that planned a command, if any.
pub fn run(pass: &mut Pass<'_>) -> Option<Method> {
    let order = eligible(pass);
    if multi(pass, &order) {
        return Some(Method::MultiNodeConsolidation);
    }
    single(pass, &order).then_some(Method::SingleNodeConsolidation)
}

/// Non-empty candidates consolidation may move now, most savings per unit of disruption
/// first; every other non-empty candidate is told why not.
fn eligible(pass: &mut Pass<'_>) -> Vec<usize> {
    let now = pass.snap.now;
    let method = Method::SingleNodeConsolidation;
    let mut order = Vec::new();
    for i in pass.open().collect::<Vec<_>>() {
        if pass.cands[i].is_empty() {
            continue;
        }
        // What blocks every method comes first; an earlier method's verdict (drift's) stays.
        let block = pass
            .blocked(i, method)
            .or_else(|| eligibility(&pass.cands[i], now, true));
        match block {
            Some(b) => pass.note_first(i, b),
            None if pass.budget_left(i, method) == 0 => {
                let b = pass.budget_block(i, method);
                pass.note_first(i, b);
            }
            None => order.push(i),
        }
    }
    pass.sort_by_savings(&mut order);
    order
}

/// Karpenter's `computeConsolidation` for candidates `idx`.
pub(crate) fn compute(pass: &mut Pass<'_>, idx: &[usize]) -> Result<Move, Block> {
    if !pass.can_simulate() {
        return Err((
            SkipKind::Deferred,
            format!(
                "not evaluated: this pass reached its bound of {} scheduling simulations",
                pass.opts.max_simulations
            ),
        ));
    }
    let out = pass.simulate(idx);
    if let Some((pod, why)) = out.unplaced.into_iter().next() {
        return Err((
            SkipKind::PodsDoNotFit,
            format!("pod {pod} would fit nowhere else: {why}"),
        ));
    }
    let (launches, nominations) = match out.launches.len() {
        0 | 1 => (replacement(pass, idx, out.launches)?, out.nominations),
        n => on_one_new_node(pass, idx, n)?,
    };
    balanced(pass, idx, &launches)?;
    Ok((launches, nominations))
}

/// The simulated new NodeClaim (if any) narrowed to what may replace candidates `idx`.
fn replacement(
    pass: &Pass<'_>,
    idx: &[usize],
    launches: Vec<Launch>,
) -> Result<Vec<Launch>, Block> {
    let Some(l) = launches.into_iter().next() else {
        return Ok(Vec::new());
    };
    let Some(pool) = pass.snap.node_pools.iter().find(|p| p.name == l.node_pool) else {
        return Err((SkipKind::NoCheaperOption, "no NodePool for its pods".into()));
    };
    let cands: Vec<&Candidate<'_>> = idx.iter().map(|&i| &pass.cands[i]).collect();
    Ok(vec![replace::cheaper(
        l,
        pool,
        &cands,
        pass.opts.spot_to_spot,
    )?])
}

/// When the cheapest packing of the candidates' pods needs `n` (two or more) new nodes,
/// consolidation (which replaces with one) tries the packing Karpenter's scheduler makes: the
/// room on existing nodes first, then as few new nodes as the largest instance types allow.
/// If that needs one new node, it is the replacement when it costs less than the candidates.
fn on_one_new_node(pass: &mut Pass<'_>, idx: &[usize], n: usize) -> Result<Move, Block> {
    let needs = format!("its pods would need {n} new nodes");
    let none_holds = |m: usize| {
        (
            SkipKind::NoCheaperOption,
            format!(
                "{needs}; no single new node holds them all (tried: the room on existing \
                 nodes first, then as few new nodes as the largest instance types and the pods' \
                 constraints allow; that still needs {m})"
            ),
        )
    };
    if pass.packs_fewest_nodes() {
        return Err(none_holds(n));
    }
    if !pass.can_simulate() {
        return Err((
            SkipKind::Deferred,
            format!(
                "{needs}; packing them onto one was not tried: this pass reached its bound of {} \
                 scheduling simulations",
                pass.opts.max_simulations
            ),
        ));
    }
    let out = pass.simulate_packed(idx, Packing::FewestNodes);
    if let Some((pod, why)) = out.unplaced.into_iter().next() {
        return Err((
            SkipKind::PodsDoNotFit,
            format!(
                "{needs}; packed onto the fewest nodes, pod {pod} would fit nowhere else: {why}"
            ),
        ));
    }
    match out.launches.len() {
        0 | 1 => {
            let launches = replacement(pass, idx, out.launches)
                .map_err(|(kind, why)| (kind, format!("{needs}; on one new node, {why}")))?;
            Ok((launches, out.nominations))
        }
        m => Err(none_holds(m)),
    }
}

/// `Balanced` pools approve a move only when the share of the pool's cost it saves is at
/// least half the share of the pool's disruption cost it causes.
fn balanced(pass: &Pass<'_>, idx: &[usize], launches: &[Launch]) -> Result<(), Block> {
    let price = |i: usize| pass.cands[i].price.unwrap_or(0.0);
    let total: f64 = idx.iter().map(|&i| price(i)).sum();
    let savings = total - launches.iter().map(|l| l.price).sum::<f64>();
    let mut pools: Vec<&str> = idx
        .iter()
        .map(|&i| pass.cands[i].pool.name.as_str())
        .collect();
    pools.sort_unstable();
    pools.dedup();
    for name in pools {
        let in_pool = |i: &usize| pass.cands[*i].pool.name == name;
        let Some(&first) = idx.iter().find(|i| in_pool(i)) else {
            continue;
        };
        if pass.cands[first].pool.disruption.policy != ConsolidationPolicy::Balanced {
            continue;
        }
        let all: Vec<usize> = (0..pass.cands.len()).filter(|i| in_pool(i)).collect();
        let pool_cost: f64 = all.iter().map(|&i| price(i)).sum();
        let pool_disruption: f64 = all.iter().map(|&i| pass.cands[i].reschedule_cost).sum();
        let mine: Vec<usize> = idx.iter().copied().filter(|i| in_pool(i)).collect();
        let share = mine.iter().map(|&i| price(i)).sum::<f64>() / total.max(1e-12);
        let saved = savings * share / pool_cost.max(1e-12);
        let disrupted = mine
            .iter()
            .map(|&i| pass.cands[i].reschedule_cost)
            .sum::<f64>()
            / pool_disruption.max(1e-12);
        if saved / disrupted.max(1e-12) < BALANCED_MIN_RATIO {
            return Err((
                SkipKind::NotWorthDisruption,
                format!(
                    "NodePool {name} is Balanced: the move saves {:.1}% of its cost for {:.1}% of its disruption",
                    saved * 100.0,
                    disrupted * 100.0
                ),
            ));
        }
    }
    Ok(())
}

/// Multi-node consolidation: the longest prefix of `order` (within budgets) that one
/// command removes, found by binary search over prefixes of two or more.
fn multi(pass: &mut Pass<'_>, order: &[usize]) -> bool {
    let method = Method::MultiNodeConsolidation;
    let mut left: std::collections::BTreeMap<String, u32> = Default::default();
    let mut within = Vec::new();
    let cap = if pass.opts.karpenter_search {
        KARPENTER_MULTI_CANDIDATES
    } else {
        usize::MAX
    };
    for &i in order.iter().take(cap) {
        let pool = pass.cands[i].pool.name.clone();
        let budget = pass.budget_left(i, method);
        let l = left.entry(pool).or_insert(budget);
        if *l > 0 {
            *l -= 1;
            within.push(i);
        }
    }
    if within.len() < 2 {
        return false;
    }
    let (mut lo, mut hi) = (2, within.len());
    let mut best: Option<(usize, Move)> = None;
    while lo <= hi {
        let mid = (lo + hi) / 2;
        match compute(pass, &within[..mid]) {
            Ok(m) => {
                best = Some((mid, m));
                lo = mid + 1;
            }
            Err((SkipKind::Deferred, _)) => break,
            Err(_) => hi = mid - 1,
        }
    }
    let Some((n, (launches, noms))) = best else {
        return false;
    };
    pass.commit(method, &within[..n], launches, noms);
    true
}

/// Single-node consolidation: every candidate evaluated, the move with the most savings per
/// unit of disruption planned.
fn single(pass: &mut Pass<'_>, order: &[usize]) -> bool {
    let mut moves: Vec<(usize, f64, Move)> = Vec::new();
    for &i in order {
        match compute(pass, &[i]) {
            Ok(m) => {
                let c = &pass.cands[i];
                let saved = c.price.unwrap_or(0.0) - m.0.iter().map(|l| l.price).sum::<f64>();
                moves.push((i, saved / c.reschedule_cost.max(1e-12), m));
                if pass.opts.karpenter_search {
                    break;
                }
            }
            Err(b) => pass.note(i, b),
        }
    }
    let Some(best) = (0..moves.len()).reduce(|a, b| {
        if moves[b].1 > moves[a].1 + 1e-12 {
            b
        } else {
            a
        }
    }) else {
        return false;
    };
    let (chosen, _, (launches, noms)) = moves.swap_remove(best);
    let why = format!(
        "moving NodeClaim {} saves more per unit of disruption",
        pass.cands[chosen].name()
    );
    for (i, ..) in &moves {
        pass.note(*i, (SkipKind::NotChosen, why.clone()));
    }
    pass.commit(Method::SingleNodeConsolidation, &[chosen], launches, noms);
    true
}
