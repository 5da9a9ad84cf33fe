//! What a pass does with commands, as Karpenter's disruption controller does, with its
//! in-memory waits turned into records on the NodeClaims and timer messages:
//!
//! - a consolidation command is recorded on its candidates and a [`TimerKind::Validate`]
//!   timer is set for 15 s later; while a record waits, no other consolidation is planned
//!   (Karpenter's loop blocks in its validation);
//! - emptiness starts at once, unlike Karpenter's (which waits 15 s as consolidation does):
//!   its nodes are tainted and checked still empty before anything is deleted
//!   ([`execute::start`]), which closes the same race without the wait, so empty nodes go at
//!   their `consolidateAfter` moment and do not queue behind a consolidation's validation
//!   (with [`crate::ctx::Settings::validate_emptiness`], the model of Karpenter's decisions
//!   records it and waits as Karpenter does);
//! - a recorded command that is due is validated ([`kerf_engine::validate`]: candidates still
//!   eligible, budgets, the same action with no dearer replacement) and started, or abandoned
//!   with the reason (`failed_validations_total{type}`);
//! - drift starts at once and expiry is forceful, neither validated;
//! - every command started sets a [`TimerKind::Requeue`] timer, so the next command is planned
//!   at once rather than at the next scheduled pass.

use std::collections::{BTreeMap, BTreeSet};

use kerf_engine::plan::{Method, Plan};
use serde_json::json;

use super::record::{self, Pending};
use super::{SweepReport, execute, progress};
use crate::claim;
use crate::ctx::Ctx;
use crate::error::ControlError;
use crate::log::{controllers::DISRUPTION, obj};
use crate::metrics::names::FAILED_VALIDATIONS;
use crate::ports::{Cloud, Cluster, Publisher, Queue, TimerKind};
use crate::view::View;

/// The first recorded command due for validation, and whether any record still waits.
fn due_record(view: &View, now: jiff::Timestamp) -> (Option<Pending>, bool) {
    let mut waiting = false;
    for c in &view.snap.node_claims {
        if let Some(p) = record::pending(c) {
            if p.due() <= now {
                return (Some(p), true);
            }
            waiting = true;
        }
    }
    (None, waiting)
}

/// Validates the first recorded command that is due and starts or abandons it; whether one
/// was handled (the caller reads the cluster again before the next).
pub async fn validate_due<C: Cluster, K: Cloud, P: Publisher, Q: Queue>(
    ctx: &Ctx<C, K, P>,
    queues: &super::Queues<'_, Q>,
    view: &View,
    opts: &kerf_engine::DisruptOptions,
    report: &mut SweepReport,
) -> Result<bool, ControlError> {
    let (Some(p), _) = due_record(view, ctx.now()) else {
        return Ok(false);
    };
    let conv = view.convert(ctx);
    match kerf_engine::validate(&conv.snapshot, opts, &p.recorded()) {
        Ok(d) => {
            if Box::pin(execute::start(ctx, queues.termination, view, &d)).await? {
                report.started.push(d.id.clone());
                super::requeue(ctx, queues.timers, "command started").await;
            } else {
                report.rejected.push(d.id.clone());
            }
        }
        Err(r) => {
            ctx.log.info(
                DISRUPTION,
                &format!("abandoning {} command, {r}", p.method.name()),
                json!({"command": p.id, "NodeClaims": p.node_claims.iter().map(|n| obj(n)).collect::<Vec<_>>()}),
            );
            ctx.metrics
                .count(FAILED_VALIDATIONS, &[("type", r.kind())], 1.0);
            report.rejected.push(p.id.clone());
        }
    }
    for c in &p.node_claims {
        progress::clear(ctx, c, record::PENDING).await?;
    }
    Ok(true)
}

/// Starts drift and expiry commands, records the others for validation, and clears records
/// that are unreadable.
pub async fn decide<C: Cluster, K: Cloud, P: Publisher, Q: Queue>(
    ctx: &Ctx<C, K, P>,
    queues: &super::Queues<'_, Q>,
    view: &View,
    plan: &Plan,
    report: &mut SweepReport,
) -> Result<(), ControlError> {
    let now = ctx.now();
    let (_, mut waiting) = due_record(view, now);
    let mut started = false;
    for d in &plan.disruptions {
        match d.method {
            Method::Expiration => {}
            Method::Emptiness if !ctx.settings.validate_emptiness => {}
            Method::Drift if !waiting => {}
            _ if waiting => continue,
            _ => {
                let p = Pending::of(d, now);
                let a = BTreeMap::from([(record::PENDING.to_string(), record::text(&p))]);
                for c in &d.node_claims {
                    ctx.cluster.annotate_node_claim(c, &a).await?;
                }
                super::set_timer(
                    ctx,
                    queues.timers,
                    TimerKind::Validate,
                    p.due(),
                    &p.node_claims,
                )
                .await;
                report.recorded.push(d.id.clone());
                waiting = true;
                continue;
            }
        }
        if Box::pin(execute::start(ctx, queues.termination, view, d)).await? {
            report.started.push(d.id.clone());
            started = true;
        } else {
            report.rejected.push(d.id.clone());
        }
    }
    if started {
        super::requeue(ctx, queues.timers, "command started").await;
    }
    clear_unreadable(ctx, view).await
}

/// A record that cannot be read (another version's, a hand edit) is removed.
async fn clear_unreadable<C: Cluster, K: Cloud, P: Publisher>(
    ctx: &Ctx<C, K, P>,
    view: &View,
) -> Result<(), ControlError> {
    let mut seen = BTreeSet::new();
    for c in &view.snap.node_claims {
        let raw = c
            .metadata
            .annotations
            .as_ref()
            .and_then(|a| a.get(record::PENDING));
        if raw.is_some_and(|r| !r.is_empty())
            && record::pending(c).is_none()
            && seen.insert(claim::name(c))
        {
            progress::clear(ctx, claim::name(c), record::PENDING).await?;
        }
    }
    Ok(())
}
