//! The provisioner function: an SQS batch of provisioning hints (the batching window plays
//! Karpenter's batch idle/max durations; the bodies only wake it, the snapshot is the truth)
//! or the scheduled safety-net sweep.
//!
//! - SQS: provision, then register, initialize and enforce the timeouts of what is due. A
//!   timer among the hints (a liveness deadline, unavailable offerings expiring) that arrives
//!   before its moment is chained on; a batch of only those runs no pass. If another decision holds the
//!   Lease, a fresh hint is queued with a short delay before the batch is acknowledged, so
//!   nothing waits for the visibility timeout. A retryable failure returns every message as
//!   a batch item failure; anything else is logged (the sweep retries it).
//! - Schedule: register, initialize, enforce launch/registration timeouts, collect garbage,
//!   then provision.
//!
//! Either way, the pass then arms its timers on the same queue: liveness deadlines coming
//! within [`liveness::HORIZON`], and, when pods were left waiting after a launch found no
//! capacity, the moment the first unavailable offering expires.

use serde::Serialize;
use serde_json::json;

use super::answers::{Failure, SweepSummary};
use super::events::{Invocation, SqsBatchResponse, SqsEvent, batch_failures, body, message_ids};
use super::flush_metrics;
use crate::ctx::Ctx;
use crate::error::ControlError;
use crate::gc;
use crate::lease::{LeaseHeld, with_lease};
use crate::log::controllers::PROVISIONER;
use crate::ports::hint::Hint;
use crate::ports::{Cloud, Cluster, Publisher, Queue, Timer, TimerKind};
use crate::provision::{ProvisionReport, batch, provision};
use crate::timers::set_timer;
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
    /// Timers armed (liveness deadlines, unavailable offerings expiring).
    pub armed: usize,
    pub collected: gc::Collected,
    /// Set when another holder had the decision Lease.
    pub busy: Option<String>,
}

/// What the provisioner answers.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Answer {
    /// An SQS batch's messages to retry.
    Batch(SqsBatchResponse),
    /// The schedule's sweep ran (or found the Lease held).
    Sweep(SweepSummary),
    /// The schedule's sweep failed.
    Failed(Failure),
}

/// Handles one invocation; `holder` identifies it for the Lease (e.g. the request id).
pub async fn handle<C: Cluster, K: Cloud, P: Publisher, Q: Queue>(
    ctx: &Ctx<C, K, P>,
    queue: &Q,
    holder: &str,
    event: &Invocation,
) -> Answer {
    let out = match event {
        Invocation::Queue(batch) => Answer::Batch(on_batch(ctx, queue, holder, batch).await),
        Invocation::Schedule(_) => on_schedule(ctx, queue, holder).await,
    };
    flush_metrics(ctx);
    out
}

async fn on_batch<C: Cluster, K: Cloud, P: Publisher, Q: Queue>(
    ctx: &Ctx<C, K, P>,
    queue: &Q,
    holder: &str,
    batch: &SqsEvent,
) -> SqsBatchResponse {
    let ids = message_ids(batch);
    if !wakes(ctx, queue, batch).await {
        return batch_failures(&[]);
    }
    match with_lease(ctx, holder, || async { batch_pass(ctx, queue).await }).await {
        Ok(Ok(_)) => batch_failures(&[]),
        Ok(Err(LeaseHeld { holder: other })) => match queue
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
) -> SqsBatchResponse {
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

/// Whether a batch asks for a pass now: a timer that arrives before its moment is sent again
/// with what remains; hints whose pods are still arriving are carried on as one hint, delayed
/// until the batch ends ([`batch`]); anything else (a due timer, a hint whose batch is over,
/// an unreadable body) wakes a pass.
async fn wakes<C: Cluster, K: Cloud, P: Publisher, Q: Queue>(
    ctx: &Ctx<C, K, P>,
    queue: &Q,
    batch: &SqsEvent,
) -> bool {
    let now = ctx.now();
    let mut wake = false;
    let mut hints = Vec::new();
    for r in &batch.records {
        let body = body(r);
        match Timer::parse(body) {
            Ok(t) if t.early(now) => {
                set_timer(ctx, queue, PROVISIONER, t.kind, t.due, &t.objects).await;
            }
            Ok(_) => wake = true,
            Err(_) => match Hint::parse(body) {
                Some(h) => hints.push(h),
                None => wake = true,
            },
        }
    }
    if hints.is_empty() {
        return wake;
    }
    let Some(arrivals) = batch::Arrivals::of(&hints) else {
        return true;
    };
    match arrivals.wait(now) {
        Some(delay) if !wake => !carry(ctx, queue, &arrivals, delay).await,
        _ => true,
    }
}

/// Sends the batch on, `delay` seconds later; whether it was sent (if not, the pass runs now).
async fn carry<C: Cluster, K: Cloud, P: Publisher, Q: Queue>(
    ctx: &Ctx<C, K, P>,
    queue: &Q,
    arrivals: &batch::Arrivals,
    delay: u32,
) -> bool {
    match queue.send(&arrivals.carried().body(), delay).await {
        Ok(_) => {
            ctx.log.debug(
                PROVISIONER,
                "pods still arriving; batch carried on",
                json!({"pods": arrivals.pods.len(), "delaySeconds": delay,
                    "since": crate::claim::rfc3339(arrivals.first)}),
            );
            true
        }
        Err(e) => {
            ctx.log.warn(
                PROVISIONER,
                "could not carry the batch on; provisioning now",
                json!({"error": e.to_string()}),
            );
            false
        }
    }
}

async fn batch_pass<C: Cluster, K: Cloud, P: Publisher, Q: Queue>(
    ctx: &Ctx<C, K, P>,
    queue: &Q,
) -> Result<PassReport, ControlError> {
    let provision = provision(ctx).await?;
    let view = View::read(ctx).await?;
    let mut r = PassReport {
        registered: register::register_pending(ctx, &view).await,
        initialized: initialize::initialize_pending(ctx, &view).await,
        expired: liveness::enforce(ctx, &view).await,
        provision,
        ..PassReport::default()
    };
    r.armed = arm(ctx, queue, &view, &r.provision).await;
    Ok(r)
}

/// Arms the pass's timers: liveness deadlines, and the first unavailable offering's expiry
/// when this invocation found no capacity and left pods waiting.
async fn arm<C: Cluster, K: Cloud, P: Publisher, Q: Queue>(
    ctx: &Ctx<C, K, P>,
    queue: &Q,
    view: &View,
    report: &ProvisionReport,
) -> usize {
    let mut n = liveness::arm(ctx, queue, view).await;
    if report.insufficient_capacity == 0 || report.unschedulable.is_empty() {
        return n;
    }
    let now = ctx.now();
    // Read again: the launches that found no capacity recorded their marks after `view`.
    let next = match ctx.cluster.unavailable_offerings(now).await {
        Ok(marks) => marks.next_expiry(now),
        Err(e) => {
            ctx.log.warn(
                PROVISIONER,
                "could not read unavailable offerings; the next sweep retries the waiting pods",
                json!({"error": e.to_string()}),
            );
            None
        }
    };
    if let Some(at) = next
        && set_timer(ctx, queue, PROVISIONER, TimerKind::Offerings, at, &[]).await
    {
        n += 1;
    }
    n
}

async fn sweep<C: Cluster, K: Cloud, P: Publisher, Q: Queue>(
    ctx: &Ctx<C, K, P>,
    queue: &Q,
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
    r.armed = arm(ctx, queue, &view, &r.provision).await;
    Ok(r)
}

/// One sweep under the Lease (the schedule's work); also what `kerf sim` runs each minute.
pub async fn run_sweep<C: Cluster, K: Cloud, P: Publisher, Q: Queue>(
    ctx: &Ctx<C, K, P>,
    queue: &Q,
    holder: &str,
) -> Result<PassReport, ControlError> {
    match with_lease(ctx, holder, || async { sweep(ctx, queue).await }).await? {
        Ok(r) => Ok(r),
        Err(LeaseHeld { holder }) => Ok(PassReport {
            busy: Some(holder),
            ..PassReport::default()
        }),
    }
}

async fn on_schedule<C: Cluster, K: Cloud, P: Publisher, Q: Queue>(
    ctx: &Ctx<C, K, P>,
    queue: &Q,
    holder: &str,
) -> Answer {
    match run_sweep(ctx, queue, holder).await {
        Ok(r) => Answer::Sweep(SweepSummary::of(&r)),
        Err(e) => {
            ctx.log
                .error(PROVISIONER, "sweep failed", json!({"error": e.to_string()}));
            Answer::Failed(Failure::new(e.to_string()))
        }
    }
}
