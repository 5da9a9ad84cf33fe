//! Building a plan's disruption command from its candidates and replacements: the contract's
//! fields, a stable identifier, savings and disruption cost.

use super::candidates::Candidate;
use crate::model::Snapshot;
use crate::plan::{CommandAction, Disruption, Launch, Method, Nomination};

/// A command over `cands` (each with its drift reason for drift commands).
pub fn build(
    snap: &Snapshot,
    method: Method,
    cands: &[&Candidate<'_>],
    replacements: Vec<Launch>,
    mut nominations: Vec<Nomination>,
) -> Disruption {
    let action = if replacements.is_empty() {
        CommandAction::Delete
    } else {
        CommandAction::Replace
    };
    let node_claims: Vec<String> = cands.iter().map(|c| c.claim.name.clone()).collect();
    let prices: Vec<f64> = cands.iter().map(|c| c.price.unwrap_or(0.0)).collect();
    let replaced: f64 = replacements.iter().map(|l| l.price).sum();
    let mut pods: Vec<String> = cands
        .iter()
        .flat_map(|c| c.movable.iter().map(|&i| snap.pods[i].key()))
        .collect();
    pods.sort();
    nominations.sort_by(|a, b| a.pod.cmp(&b.pod));
    let drift_reasons = if method == Method::Drift {
        cands.iter().filter_map(|c| c.drift).collect()
    } else {
        Vec::new()
    };
    Disruption {
        reason: method.reason(),
        action,
        id: id(method, action, &node_claims),
        nodes: cands.iter().map(|c| c.node.name.clone()).collect(),
        node_pools: cands.iter().map(|c| c.pool.name.clone()).collect(),
        savings_per_hour: round6(prices.iter().sum::<f64>() - replaced),
        prices,
        node_claims,
        replacement: replacements.first().cloned(),
        replacements,
        method,
        pods,
        nominations,
        drift_reasons,
        disruption_cost: round6(cands.iter().map(|c| c.disruption_cost).sum()),
    }
}

/// `<method>-<16 hex digits>`: FNV-1a over the method, action and NodeClaims, so a later pass
/// computing the same command gets the same identifier on any platform.
pub fn id(method: Method, action: CommandAction, node_claims: &[String]) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut eat = |s: &str| {
        for b in s.bytes().chain(std::iter::once(0)) {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
    };
    eat(method.reason().as_str());
    eat(action.as_str());
    for c in node_claims {
        eat(c);
    }
    format!("{}-{h:016x}", method.reason().as_str())
}

/// Rounds money to six decimals (never a negative zero).
pub fn round6(x: f64) -> f64 {
    (x * 1e6).round() / 1e6 + 0.0
}
