//! Karpenter's validation of a recorded command (`validation.go`): 15 s after a command is
//! recorded, its candidates are listed again and the command runs only if every one is still
//! a candidate for its method, the budgets still allow them all, and (for consolidation) a
//! fresh simulation over exactly those candidates still gives the same action with every
//! recorded replacement option still an option (so it costs no more). Emptiness is not
//! simulated again, as in Karpenter. Drift and expiration are never validated.

use super::candidates::{Block, census};
use super::methods::consolidation::{compute, eligibility};
use super::pass::Pass;
use super::{DisruptOptions, pool_budgets};
use crate::model::Snapshot;
use crate::plan::{Disruption, Method};

/// A command as recorded for validation.
#[derive(Clone, Debug, PartialEq)]
pub struct Recorded<'a> {
    pub method: Method,
    pub node_claims: &'a [String],
    /// The instance-type options of each replacement (empty for a delete).
    pub options: &'a [Vec<String>],
}

/// Why a recorded command no longer holds, in Karpenter's three kinds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Rejection {
    /// A candidate is gone, blocked or no longer eligible for the method.
    Churn(String),
    /// The budgets no longer allow every candidate.
    Budget(String),
    /// The simulation now gives another action or a replacement that may cost more.
    Scheduling(String),
}

impl Rejection {
    /// Karpenter's `failed_validations_total{type}` label.
    pub fn kind(&self) -> &'static str {
        match self {
            Rejection::Churn(_) => "churn",
            Rejection::Budget(_) => "budget",
            Rejection::Scheduling(_) => "scheduling",
        }
    }

    pub fn message(&self) -> &str {
        match self {
            Rejection::Churn(m) | Rejection::Budget(m) | Rejection::Scheduling(m) => m,
        }
    }
}

impl std::fmt::Display for Rejection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.kind(), self.message())
    }
}

fn churn((_, why): Block, claim: &str) -> Rejection {
    Rejection::Churn(format!("NodeClaim {claim}: {why}"))
}

/// Validates `rec` against the snapshot; the command to run when it still holds.
pub fn validate(
    snap: &Snapshot,
    opts: &DisruptOptions,
    rec: &Recorded<'_>,
) -> Result<Disruption, Rejection> {
    let census = census(snap);
    let budgets = pool_budgets(snap, &census);
    let mut pass = Pass::new(snap, census, &budgets, opts);
    let idx = candidates(&pass, rec)?;
    within_budget(&pass, &idx, rec.method)?;
    let (launches, noms) = match rec.method {
        Method::Emptiness => (Vec::new(), Vec::new()),
        Method::MultiNodeConsolidation | Method::SingleNodeConsolidation => {
            let (mut launches, noms) =
                compute(&mut pass, &idx).map_err(|(_, why)| Rejection::Scheduling(why))?;
            same_action(&mut launches, rec.options)?;
            (launches, noms)
        }
        Method::Drift | Method::Expiration => {
            return Err(Rejection::Churn(format!(
                "{} commands are not validated",
                rec.method.name()
            )));
        }
    };
    pass.commit(rec.method, &idx, launches, noms);
    pass.commands
        .pop()
        .ok_or_else(|| Rejection::Churn("no command".into()))
}

/// The candidate index of each recorded NodeClaim, each still eligible for the method.
fn candidates(pass: &Pass<'_>, rec: &Recorded<'_>) -> Result<Vec<usize>, Rejection> {
    let now = pass.snap.now;
    let underutilized = rec.method != Method::Emptiness;
    let mut idx = Vec::with_capacity(rec.node_claims.len());
    for name in rec.node_claims {
        let i = (0..pass.cands.len())
            .find(|&i| pass.cands[i].name() == name)
            .ok_or_else(|| {
                Rejection::Churn(format!("NodeClaim {name} is no longer a candidate"))
            })?;
        if let Some(b) = pass
            .blocked(i, rec.method)
            .or_else(|| eligibility(&pass.cands[i], now, underutilized))
        {
            return Err(churn(b, name));
        }
        if pass.cands[i].is_empty() == underutilized {
            let now_is = if underutilized { "empty" } else { "not empty" };
            return Err(Rejection::Churn(format!(
                "NodeClaim {name} is {now_is} now"
            )));
        }
        idx.push(i);
    }
    Ok(idx)
}

/// Every candidate still within its pool's budget for the method.
fn within_budget(pass: &Pass<'_>, idx: &[usize], method: Method) -> Result<(), Rejection> {
    let mut need: std::collections::BTreeMap<&str, u32> = Default::default();
    for &i in idx {
        *need.entry(pass.cands[i].pool.name.as_str()).or_default() += 1;
    }
    for (pool, n) in need {
        let Some(&i) = idx.iter().find(|&&i| pass.cands[i].pool.name == pool) else {
            continue;
        };
        if pass.budget_left(i, method) < n {
            let (_, why) = pass.budget_block(i, method);
            return Err(Rejection::Budget(why));
        }
    }
    Ok(())
}

/// The fresh simulation must give the recorded action, and for a replacement every recorded
/// option must still be an option; the replacement then launches with the recorded options
/// only, so it costs what was validated.
fn same_action(
    launches: &mut [crate::plan::Launch],
    recorded: &[Vec<String>],
) -> Result<(), Rejection> {
    if launches.len() != recorded.len() {
        return Err(Rejection::Scheduling(format!(
            "the command now needs {} replacements, not {}",
            launches.len(),
            recorded.len()
        )));
    }
    for (l, then) in launches.iter_mut().zip(recorded) {
        if let Some(gone) = then.iter().find(|t| !l.instance_type_options.contains(t)) {
            return Err(Rejection::Scheduling(format!(
                "instance type {gone} is no longer an option for the replacement"
            )));
        }
        l.instance_type_options.retain(|t| then.contains(t));
        if !then.contains(&l.instance_type)
            && let Some(first) = l.instance_type_options.first()
        {
            l.instance_type = first.clone();
        }
    }
    Ok(())
}
