//! Commands under way, and the repairs every sweep makes:
//! - a command whose replacements are all initialized deletes its candidates (their
//!   termination is queued); one whose replacement is gone (no capacity, deleted) or that is
//!   older than [`record::COMMAND_TIMEOUT`] is rolled back: candidates untainted, their
//!   `DisruptionReason` cleared, the record removed (the replacements stay, as Karpenter's do);
//! - a `karpenter.sh/disrupted` taint left by a sweep that died before recording its command
//!   is removed, as Karpenter removes stale taints at every pass;
//! - a Node being deleted (`kubectl delete node`) has its NodeClaim deleted, as Karpenter's
//!   node finalizer does: the NodeClaim is the one thing termination takes down;
//! - a NodeClaim being deleted gets its termination queued (again, if nothing moved it for
//!   [`REQUEUE_TERMINATION_AFTER`]: a lost message must not strand a node).

use std::collections::BTreeMap;

use jiff::{SignedDuration, Timestamp};
use kerf_api::v1::{ConditionStatus, NodeClaim};
use serde_json::json;

use super::execute::{DISRUPTION_REASON, replacement_of};
use super::record::{self, Command};
use crate::claim::{self, condition};
use crate::ctx::Ctx;
use crate::error::ControlError;
use crate::log::{controllers::DISRUPTION, obj};
use crate::names::{DISRUPTED_TAINT, conditions};
use crate::ports::{Cloud, Cluster, Publisher, Queue};
use crate::retire::{Retirement, delete_one};
use crate::view::View;

/// Annotation: when the termination of a deleting NodeClaim was last queued by a sweep.
pub const TERMINATION_QUEUED: &str = "kerf.dev/termination-queued";
/// A deleting NodeClaim's termination is queued again after this long.
pub const REQUEUE_TERMINATION_AFTER: SignedDuration = SignedDuration::from_mins(2);

/// What progress did.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Progress {
    pub finished: Vec<String>,
    pub rolled_back: Vec<String>,
    pub untainted: Vec<String>,
    pub terminations_queued: Vec<String>,
    /// A candidate of each command still waiting for its replacements to initialize, when
    /// no timer is armed to look at it again ([`CHECK_AT`]).
    pub waiting: Vec<String>,
}

/// Candidates of each command under way, by command id.
fn commands(view: &View) -> BTreeMap<String, (Command, Vec<&NodeClaim>)> {
    let mut out: BTreeMap<String, (Command, Vec<&NodeClaim>)> = BTreeMap::new();
    for c in &view.snap.node_claims {
        if let Some(cmd) = record::command(c) {
            out.entry(cmd.id.clone())
                .or_insert_with(|| (cmd, Vec::new()))
                .1
                .push(c);
        }
    }
    out
}

/// Advances every command under way.
pub async fn advance<C: Cluster, K: Cloud, P: Publisher, Q: Queue>(
    ctx: &Ctx<C, K, P>,
    termination: &Q,
    view: &View,
    out: &mut Progress,
) -> Result<(), ControlError> {
    let now = ctx.now();
    for (id, (cmd, cands)) in commands(view) {
        let live: Vec<&&NodeClaim> = cands
            .iter()
            .filter(|c| c.metadata.deletion_timestamp.is_none())
            .collect();
        if live.is_empty() {
            continue;
        }
        let reps: Vec<&NodeClaim> = view
            .snap
            .node_claims
            .iter()
            .filter(|c| replacement_of(c, &id) && c.metadata.deletion_timestamp.is_none())
            .collect();
        let ready = reps
            .iter()
            .filter(|r| claim::is_true(r, conditions::INITIALIZED))
            .count();
        if reps.len() == cmd.replacements && ready == cmd.replacements {
            for c in &live {
                let pool = claim::pool_name(c).unwrap_or_default().to_string();
                let why = Retirement::Disruption(cmd.reason);
                delete_one(ctx, termination, claim::name(c), &pool, why).await?;
            }
            out.finished.push(id);
        } else if reps.len() < cmd.replacements || now >= cmd.started + record::COMMAND_TIMEOUT {
            let why = if reps.len() < cmd.replacements {
                "a replacement is gone"
            } else {
                "replacements not initialized in time"
            };
            for c in &live {
                roll_back(ctx, view, c, now).await?;
            }
            ctx.log.warn(
                DISRUPTION,
                "rolled back disruption command",
                json!({"command": id, "reason": why}),
            );
            out.rolled_back.push(id);
        } else if !live.iter().any(|c| check_armed(c, now)) {
            out.waiting.push(claim::name(live[0]).to_string());
        }
    }
    Ok(())
}

/// Annotation: when a timer will look again at the command on this candidate.
pub const CHECK_AT: &str = "kerf.dev/check-at";

/// Whether a timer is armed to look at `c`'s command after `now`.
fn check_armed(c: &NodeClaim, now: Timestamp) -> bool {
    c.metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(CHECK_AT))
        .and_then(|t| t.parse::<Timestamp>().ok())
        .is_some_and(|t| t > now)
}

/// Untaints a candidate, clears its `DisruptionReason` and its command record.
async fn roll_back<C: Cluster, K: Cloud, P: Publisher>(
    ctx: &Ctx<C, K, P>,
    view: &View,
    c: &NodeClaim,
    now: Timestamp,
) -> Result<(), ControlError> {
    if let Some(node) = node_of(view, c) {
        ctx.cluster.untaint_node(&node, DISRUPTED_TAINT).await?;
    }
    let cond = condition(
        DISRUPTION_REASON,
        ConditionStatus::False,
        "CommandRolledBack",
        "",
    );
    ctx.cluster
        .set_node_claim_conditions(claim::name(c), &[cond], now)
        .await?;
    clear(ctx, claim::name(c), record::COMMAND).await
}

/// Removes an annotation (an empty value removes the key).
pub async fn clear<C: Cluster, K: Cloud, P: Publisher>(
    ctx: &Ctx<C, K, P>,
    name: &str,
    key: &str,
) -> Result<(), ControlError> {
    let a = BTreeMap::from([(key.to_string(), String::new())]);
    ctx.cluster.annotate_node_claim(name, &a).await?;
    Ok(())
}

fn node_of(view: &View, c: &NodeClaim) -> Option<String> {
    claim::status(c).node_name.filter(|n| {
        view.snap
            .nodes
            .iter()
            .any(|x| x.metadata.name.as_deref() == Some(n.as_str()))
    })
}

/// Removes `karpenter.sh/disrupted` from nodes no command owns and nothing deletes.
pub async fn untaint_stale<C: Cluster, K: Cloud, P: Publisher>(
    ctx: &Ctx<C, K, P>,
    view: &View,
    out: &mut Progress,
) -> Result<(), ControlError> {
    for n in &view.snap.nodes {
        let tainted = n
            .spec
            .as_ref()
            .and_then(|s| s.taints.as_ref())
            .is_some_and(|ts| ts.iter().any(|t| t.key == DISRUPTED_TAINT));
        if !tainted || n.metadata.deletion_timestamp.is_some() {
            continue;
        }
        let name = n.metadata.name.clone().unwrap_or_default();
        let owner = view
            .snap
            .node_claims
            .iter()
            .find(|c| claim::status(c).node_name.as_deref() == Some(name.as_str()));
        let owned = owner.is_some_and(|c| {
            c.metadata.deletion_timestamp.is_some() || record::command(c).is_some()
        });
        if !owned {
            ctx.cluster.untaint_node(&name, DISRUPTED_TAINT).await?;
            ctx.log.info(
                DISRUPTION,
                "removed stale disruption taint",
                json!({"Node": obj(&name)}),
            );
            out.untainted.push(name);
        }
    }
    Ok(())
}

/// Deletes the live NodeClaims of Nodes being deleted; their names.
pub async fn follow_node_deletions<C: Cluster, K: Cloud, P: Publisher>(
    ctx: &Ctx<C, K, P>,
    view: &View,
) -> Result<Vec<String>, ControlError> {
    let mut deleted = Vec::new();
    for n in view
        .snap
        .nodes
        .iter()
        .filter(|n| claim::deleting_ours(&n.metadata))
    {
        let name = n.metadata.name.as_deref().unwrap_or_default();
        let pid = n.spec.as_ref().and_then(|s| s.provider_id.as_deref());
        let Some(c) = view.snap.node_claims.iter().find(|c| {
            c.metadata.deletion_timestamp.is_none()
                && (claim::status(c).node_name.as_deref() == Some(name)
                    || (pid.is_some() && claim::provider_id(c) == pid))
        }) else {
            continue;
        };
        let claim_name = claim::name(c).to_string();
        ctx.cluster.delete_node_claim(&claim_name, None).await?;
        ctx.log.info(
            DISRUPTION,
            "deleted nodeclaim of a deleting node",
            json!({"NodeClaim": obj(&claim_name), "Node": obj(name)}),
        );
        deleted.push(claim_name);
    }
    Ok(deleted)
}

/// Queues the termination of deleting NodeClaims no sweep queued recently (and of those whose
/// Node is being deleted, deleting them first).
pub async fn queue_terminations<C: Cluster, K: Cloud, P: Publisher, Q: Queue>(
    ctx: &Ctx<C, K, P>,
    termination: &Q,
    view: &View,
    out: &mut Progress,
) -> Result<(), ControlError> {
    let now = ctx.now();
    for name in follow_node_deletions(ctx, view).await? {
        crate::retire::enqueue(termination, &name, 0).await?;
        let a = BTreeMap::from([(TERMINATION_QUEUED.to_string(), claim::rfc3339(now))]);
        ctx.cluster.annotate_node_claim(&name, &a).await?;
        out.terminations_queued.push(name);
    }
    for c in view
        .snap
        .node_claims
        .iter()
        .filter(|c| claim::deleting_ours(&c.metadata))
    {
        let last: Option<Timestamp> = c
            .metadata
            .annotations
            .as_ref()
            .and_then(|a| a.get(TERMINATION_QUEUED))
            .and_then(|v| v.parse().ok());
        if last.is_some_and(|t| now < t + REQUEUE_TERMINATION_AFTER) {
            continue;
        }
        let name = claim::name(c).to_string();
        crate::retire::enqueue(termination, &name, 0).await?;
        let a = BTreeMap::from([(TERMINATION_QUEUED.to_string(), claim::rfc3339(now))]);
        ctx.cluster.annotate_node_claim(&name, &a).await?;
        out.terminations_queued.push(name);
    }
    Ok(())
}
