//! Acting on a batch of interruption messages, as Karpenter's interruption controller does,
//! from one snapshot per batch ([`super::plan`]): every message records Karpenter's Event on
//! the NodeClaim and its Node; a spot interruption marks its offering unavailable; it, a
//! scheduled change, a stopping or terminating instance and a capacity-reservation
//! interruption launch replacement capacity for the node's pods at once (the engine's
//! evacuation, the reclaimed offering left out) and start the NodeClaim's termination
//! (`TerminatingOnInterruption`); a rebalance recommendation is an Event, and a replacement
//! too when the NodePool opts in with `kerf.dev/rebalance: replace` and the
//! `RebalanceReplacement` gate is on.
//!
//! Messages that cannot be parsed, carry no action ([`super::intake`]) or name instances Kerf
//! does not manage are dropped (deleted); one whose handling hits a transient error is
//! reported failed, so SQS delivers it again. Handling is idempotent: a NodeClaim already
//! deleting is not deleted again.

use std::collections::BTreeMap;

use futures::StreamExt;
use futures::stream;
use kerf_api::v1::NodeClaim;
use kerf_catalog::unavailable::{OfferingKey, marks};
use kerf_engine::DisruptOptions;
use serde_json::json;

use super::events::Interruption;
use super::intake::{Intake, Message, triage};
use super::plan::Plan;
use crate::claim;
use crate::ctx::Ctx;
use crate::error::ControlError;
use crate::events::emit_all;
use crate::launch::{CreateError, Creation, create_claim, launch_claim};
use crate::log::controllers::INTERRUPTION;
use crate::ports::{Cloud, Cluster, Publisher, Queue};
use crate::retire::{Retirement, delete_one};
use crate::view::View;

/// The NodePool annotation opting in to replacement on a rebalance recommendation.
pub const REBALANCE_ANNOTATION: &str = "kerf.dev/rebalance";

/// Options of the interruption function.
#[derive(Clone, Debug, Default)]
pub struct InterruptOptions {
    /// Replace nodes on a rebalance recommendation when their NodePool opts in.
    pub rebalance_replacement: bool,
}

/// What a batch did.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct BatchReport {
    /// Messages to deliver again (a transient error).
    pub failed: Vec<String>,
    /// Messages handled or dropped (deleted).
    pub deleted: usize,
    /// Replacement NodeClaims created.
    pub replacements: Vec<String>,
    /// NodeClaims whose termination started.
    pub terminated: Vec<String>,
}

/// Handles a batch.
pub async fn handle_batch<C: Cluster, K: Cloud, P: Publisher, Q: Queue>(
    ctx: &Ctx<C, K, P>,
    termination: &Q,
    messages: &[Message],
    opts: &InterruptOptions,
) -> BatchReport {
    let Intake { work, dropped } = triage(&ctx.log, &ctx.metrics, ctx.now(), messages);
    let mut report = BatchReport {
        deleted: dropped,
        ..BatchReport::default()
    };
    if work.is_empty() {
        return report;
    }
    let ids: Vec<String> = work.iter().map(|(id, _)| id.to_string()).collect();
    match act(ctx, termination, &work, opts, &mut report).await {
        Ok(()) => report.deleted += work.len() - report.failed.len(),
        Err(e) => {
            ctx.log.error(
                INTERRUPTION,
                "failed handling interruption messages",
                json!({"error": e.to_string()}),
            );
            report.failed = ids;
        }
    }
    report
}

/// Acts on parsed messages (`(message id, interruption)`), from one snapshot; a transient
/// failure marks the messages of the NodeClaims it concerns failed in `report`.
pub(crate) async fn act<C: Cluster, K: Cloud, P: Publisher, Q: Queue>(
    ctx: &Ctx<C, K, P>,
    termination: &Q,
    work: &[(&str, Interruption)],
    opts: &InterruptOptions,
    report: &mut BatchReport,
) -> Result<(), ControlError> {
    let mut view = View::read_with(ctx, true).await?;
    let plan = Plan::of(&view.snap, &ctx.metrics, work, opts);
    mark_unavailable(ctx, &mut view, &plan.reclaimed).await;
    if plan.evacuate.is_empty() {
        emit_all(ctx, plan.events.clone()).await;
        return Ok(());
    }
    let notices = emit_all(ctx, plan.events.clone());
    let (_, replaced) = futures::join!(notices, Box::pin(replace(ctx, &view, &plan, report)));
    if let Err(e) = replaced {
        // Nothing is terminated before its replacement exists: every message comes back.
        warn_failed(ctx, "launching replacements", &e);
        for ids in plan.evacuate.values() {
            fail(report, ids);
        }
        return Ok(());
    }
    let n = ctx.settings.concurrency.max(1);
    let (view, plan) = (&view, &plan);
    let done: Vec<(&String, &Vec<String>, Result<(), StepFailed>)> =
        stream::iter(plan.evacuate.iter().map(|(name, ids)| async move {
            let why = Retirement::Interruption {
                kind: plan.kinds.get(name).copied().unwrap_or_default(),
                forceful: plan.forceful.contains(name),
            };
            (
                name,
                ids,
                terminate(ctx, termination, view, name, why).await,
            )
        }))
        .buffered(n)
        .collect()
        .await;
    let mut started = Vec::new();
    for (name, ids, r) in done {
        match r {
            Ok(()) => {
                report.terminated.push(name.clone());
                started.extend(plan.on_termination.get(name).into_iter().flatten().cloned());
            }
            Err((step, e)) => {
                warn_failed(ctx, step, &e);
                fail(report, ids);
            }
        }
    }
    emit_all(ctx, started).await;
    Ok(())
}

/// Records `keys` unavailable in the cache and in `view` (this batch leaves them out).
async fn mark_unavailable<C: Cluster, K: Cloud, P: Publisher>(
    ctx: &Ctx<C, K, P>,
    view: &mut View,
    keys: &[OfferingKey],
) {
    if keys.is_empty() {
        return;
    }
    let now = ctx.now();
    if let Err(e) = ctx.cluster.record_unavailable(&marks(keys, now), now).await {
        // Best effort, as for launches: this batch leaves the offerings out anyway; a later
        // decision may offer them again, and the fleet request ranks by capacity.
        ctx.log.warn(
            INTERRUPTION,
            "could not record unavailable offerings",
            json!({"error": e.to_string()}),
        );
    }
    view.mark_unavailable(keys);
}

/// A step that failed and why.
type StepFailed = (&'static str, ControlError);

/// Starts the termination of one NodeClaim (its deadline first when forceful); the error
/// names the step that failed.
async fn terminate<C: Cluster, K: Cloud, P: Publisher, Q: Queue>(
    ctx: &Ctx<C, K, P>,
    termination: &Q,
    view: &View,
    name: &str,
    why: Retirement<'_>,
) -> Result<(), StepFailed> {
    if matches!(why, Retirement::Interruption { forceful: true, .. }) {
        let now = BTreeMap::from([(
            kerf_labels::NODECLAIM_TERMINATION_TIMESTAMP.to_string(),
            claim::rfc3339(ctx.now()),
        )]);
        ctx.cluster
            .annotate_node_claim(name, &now)
            .await
            .map_err(|e| ("marking forceful termination", e.into()))?;
    }
    let pool = view
        .snap
        .node_claims
        .iter()
        .find(|c| claim::name(c) == name)
        .and_then(|c| claim::pool_name(c))
        .unwrap_or_default();
    delete_one(ctx, termination, name, pool, why)
        .await
        .map_err(|e| ("starting termination", e))
}

/// Reports `ids` failed (once each).
fn fail(report: &mut BatchReport, ids: &[String]) {
    for id in ids {
        if !report.failed.contains(id) {
            report.failed.push(id.clone());
        }
    }
}

fn warn_failed<C, K, P>(ctx: &Ctx<C, K, P>, what: &str, e: &ControlError) {
    ctx.log.warn(
        INTERRUPTION,
        "interruption message will be retried",
        json!({"step": what, "error": e.to_string()}),
    );
}

/// Creates the evacuation's replacements, then launches them, each step concurrently (a mass
/// interruption brings many in one batch); a launch without capacity is left to the
/// provisioner, which places the pods once they are evicted. A creation that fails fails the
/// batch once the others are launched.
async fn replace<C: Cluster, K: Cloud, P: Publisher>(
    ctx: &Ctx<C, K, P>,
    view: &View,
    plan: &Plan,
    report: &mut BatchReport,
) -> Result<(), ControlError> {
    let conv = view.convert(ctx);
    let names: Vec<String> = plan.evacuate.keys().cloned().collect();
    let opts = DisruptOptions {
        max_instance_types: ctx.settings.max_instance_types,
        optimize_cost: ctx.settings.optimize_cost,
        ..DisruptOptions::default()
    };
    let evac = kerf_engine::evacuate(&conv.snapshot, &names, &opts);
    let labels = BTreeMap::new();
    let n = ctx.settings.concurrency.max(1);
    let created: Vec<Result<NodeClaim, CreateError>> = stream::iter(
        evac.launches
            .iter()
            .map(|l| create_claim(ctx, view, l, &labels, Creation::Interruption)),
    )
    .buffered(n)
    .collect()
    .await;
    let (claims, failed): (Vec<_>, Vec<_>) = created.into_iter().partition(Result::is_ok);
    let claims: Vec<NodeClaim> = claims.into_iter().flatten().collect();
    report
        .replacements
        .extend(claims.iter().map(|c| claim::name(c).to_string()));
    stream::iter(claims.iter().map(|c| launch_claim(ctx, view, c)))
        .buffered(n)
        .collect::<Vec<_>>()
        .await;
    match failed.into_iter().find_map(Result::err) {
        Some(e) => Err(e.into()),
        None => Ok(()),
    }
}
