//! The provisioner function: an SQS batch of provisioning hints (the batching window plays
//! Karpenter's batch idle/max durations; the bodies only wake it, the snapshot is the truth)
//! or the scheduled safety-net sweep.
//!
//! - SQS: provision, then register and initialize what is due. If another decision holds the
//!   Lease, a fresh hint is queued with a short delay before the batch is acknowledged, so
//!   nothing waits for the visibility timeout. A retryable failure returns every message as
//!   a batch item failure; anything else is logged (the sweep retries it).
//! - Schedule: register, initialize, enforce launch/registration timeouts, collect garbage,
//!   then provision.

use serde_json::{Value, json};

use super::{batch_failures, flush_metrics, message_ids};
use crate::ctx::Ctx;
use crate::error::ControlError;
use crate::gc;
use crate::lease::with_lease;
use crate::log::controllers::PROVISIONER;
use crate::ports::{Cloud, Cluster, Publisher, Queue};
use crate::provision::{ProvisionReport, provision};
use crate::view::View;
use crate::webhook::pods::hint;
use crate::{initialize, liveness, register};

/// Seconds a re-queued hint waits while another decision holds the Lease.
pub const BUSY_REQUEUE_SECONDS: u32 = 5;

/// What one invocation did (the schedule's response body).
#[derive(Debug, Default, Clone, PartialEq)]
pub struct PassReport {
    pub provision: ProvisionReport,
    pub registered: usize,
    pub initialized: usize,
    pub expired: usize,
    pub collected: gc::Collected,
    /// Set when another holder had the decision Lease.
    pub busy: Option<String>,
}

/// Handles one invocation; `holder` identifies it for the Lease (e.g. the request id).
pub async fn handle<C: Cluster, K: Cloud, P: Publisher, Q: Queue>(
    ctx: &Ctx<C, K, P>,
    queue: &Q,
    holder: &str,
    event: &Value,
) -> Value {
    let out = if event.get("Records").is_some() {
        on_batch(ctx, queue, holder, event).await
    } else {
        on_schedule(ctx, holder).await
    };
    flush_metrics(ctx);
    out
}

async fn on_batch<C: Cluster, K: Cloud, P: Publisher, Q: Queue>(
    ctx: &Ctx<C, K, P>,
    queue: &Q,
    holder: &str,
    event: &Value,
) -> Value {
    let ids = message_ids(event);
    match with_lease(ctx, holder, || async { batch_pass(ctx).await }).await {
        Ok(Ok(_)) => batch_failures(&[]),
        Ok(Err(other)) => match queue
            .send(&hint(&[], ctx.now()), BUSY_REQUEUE_SECONDS)
            .await
        {
            Ok(_) => {
                ctx.log.info(
                    PROVISIONER,
                    "decision lease busy; provisioning request re-queued",
                    json!({"holder": other}),
                );
                batch_failures(&[])
            }
            Err(e) => {
                ctx.log.error(
                    PROVISIONER,
                    "decision lease busy and re-queue failed",
                    json!({"holder": other, "error": e.to_string()}),
                );
                batch_failures(&ids)
            }
        },
        Err(e) => failed(ctx, &e, &ids),
    }
}

fn failed<C: Cluster, K: Cloud, P: Publisher>(
    ctx: &Ctx<C, K, P>,
    e: &ControlError,
    ids: &[String],
) -> Value {
    ctx.log.error(
        PROVISIONER,
        "provisioning failed",
        json!({"error": e.to_string(), "retryable": e.is_retryable()}),
    );
    if e.is_retryable() {
        batch_failures(ids)
    } else {
        batch_failures(&[])
    }
}

async fn batch_pass<C: Cluster, K: Cloud, P: Publisher>(
    ctx: &Ctx<C, K, P>,
) -> Result<PassReport, ControlError> {
    let provision = provision(ctx).await?;
    let view = View::read(ctx).await?;
    Ok(PassReport {
        provision,
        registered: register::register_pending(ctx, &view).await,
        initialized: initialize::initialize_pending(ctx, &view).await,
        ..PassReport::default()
    })
}

async fn sweep<C: Cluster, K: Cloud, P: Publisher>(
    ctx: &Ctx<C, K, P>,
) -> Result<PassReport, ControlError> {
    let view = View::read(ctx).await?;
    let mut r = PassReport {
        registered: register::register_pending(ctx, &view).await,
        initialized: initialize::initialize_pending(ctx, &view).await,
        expired: liveness::enforce(ctx, &view).await,
        ..PassReport::default()
    };
    match gc::collect(ctx, &view).await {
        Ok(c) => r.collected = c,
        Err(e) => ctx.log.warn(
            PROVISIONER,
            "garbage collection failed",
            json!({"error": e.to_string()}),
        ),
    }
    r.provision = provision(ctx).await?;
    Ok(r)
}

/// One sweep under the Lease (the schedule's work); also what `kerf sim` runs each minute.
pub async fn run_sweep<C: Cluster, K: Cloud, P: Publisher>(
    ctx: &Ctx<C, K, P>,
    holder: &str,
) -> Result<PassReport, ControlError> {
    match with_lease(ctx, holder, || async { sweep(ctx).await }).await? {
        Ok(r) => Ok(r),
        Err(other) => Ok(PassReport {
            busy: Some(other),
            ..PassReport::default()
        }),
    }
}

async fn on_schedule<C: Cluster, K: Cloud, P: Publisher>(
    ctx: &Ctx<C, K, P>,
    holder: &str,
) -> Value {
    match run_sweep(ctx, holder).await {
        Ok(r) => summary(&r),
        Err(e) => {
            ctx.log
                .error(PROVISIONER, "sweep failed", json!({"error": e.to_string()}));
            json!({"status": "failed", "error": e.to_string()})
        }
    }
}

/// The schedule's response body.
pub fn summary(r: &PassReport) -> Value {
    json!({
        "status": if r.busy.is_some() { "busy" } else { "ok" },
        "created": r.provision.created,
        "launched": r.provision.launched,
        "unschedulable": r.provision.unschedulable.len(),
        "registered": r.registered,
        "initialized": r.initialized,
        "expired": r.expired,
        "collectedInstances": r.collected.instances,
        "collectedNodeClaims": r.collected.node_claims,
    })
}
