//! The disruption function. A scheduled event (every minute, the safety net) polls instance
//! health ([`crate::interrupt::health`]) and runs one pass under the decision Lease
//! ([`crate::disrupt::sweep`]); an SQS batch of timer messages ([`crate::ports::timer`])
//! runs one pass for the whole batch. Terminations go to the termination queue.
//!
//! Timer messages: one that arrives before its moment (a chained timer) is sent again with
//! what remains; pod events move `lastPodEventTime` first; one that is not a timer is logged
//! and dropped (it can never succeed). When another decision holds the Lease the pass is
//! requeued a few seconds later; when the pass fails, the batch comes back (batch item
//! failures) and is retried after the visibility timeout.

use serde::Serialize;
use serde_json::json;

use super::answers::{Busy, Failure, PassSummary};
use super::events::{Invocation, SqsBatchResponse, SqsEvent, batch_failures, body, fail_all};
use super::flush_metrics;
use crate::ctx::Ctx;
use crate::disrupt::{Queues, SweepOptions, SweepReport, requeue, sweep, timers};
use crate::error::ControlError;
use crate::interrupt::InterruptOptions;
use crate::interrupt::health;
use crate::lease::with_lease;
use crate::log::controllers::DISRUPTION;
use crate::ports::{Cloud, Cluster, Publisher, Queue, Timer, TimerKind};
use crate::view::View;

/// What a batch of timer messages asks for.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Wake {
    /// Whether any timer is due (a pass runs).
    pub pass: bool,
    /// Nodes whose pods changed.
    pub pod_events: Vec<String>,
}

/// One pass under the Lease (pod events first); `Ok(None)` when another decision holds it.
pub async fn run<C: Cluster, K: Cloud, P: Publisher, Q: Queue>(
    ctx: &Ctx<C, K, P>,
    queues: &Queues<'_, Q>,
    holder: &str,
    opts: &SweepOptions,
    pod_events: &[String],
) -> Result<Option<SweepReport>, ControlError> {
    Ok(with_lease(ctx, holder, || async {
        if !pod_events.is_empty() {
            let view = View::read_with(ctx, false).await?;
            timers::pod_events(ctx, &view, pod_events).await?;
        }
        // Boxed: a pass's future is large (launches, drains), and its caller's stack is not.
        Box::pin(sweep(ctx, queues, opts)).await
    })
    .await?
    .ok())
}

/// Reads a batch of timer messages: early ones are sent again, unreadable ones dropped.
pub async fn read_timers<C: Cluster, K: Cloud, P: Publisher, Q: Queue>(
    ctx: &Ctx<C, K, P>,
    timers: &Q,
    batch: &SqsEvent,
) -> Wake {
    let now = ctx.now();
    let mut wake = Wake::default();
    for r in &batch.records {
        let t = match Timer::parse(body(r)) {
            Ok(t) => t,
            Err(e) => {
                ctx.log.warn(
                    DISRUPTION,
                    "dropping a message that is not a timer",
                    json!({"messageId": r.message_id, "error": e.to_string()}),
                );
                continue;
            }
        };
        if t.early(now) {
            crate::disrupt::set_timer(ctx, timers, t.kind, t.due, &t.objects).await;
            continue;
        }
        if t.kind == TimerKind::PodEvent {
            wake.pod_events.extend(t.objects);
        }
        wake.pass = true;
    }
    wake.pod_events.sort();
    wake.pod_events.dedup();
    wake
}

/// What the disruption function answers.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Answer {
    /// A timer batch's messages to retry (no pass ran, or it found the Lease held or failed).
    Batch(SqsBatchResponse),
    /// A pass ran: after a timer batch, with its (empty) batch item failures; after the
    /// schedule, with the instances health checks terminated.
    Pass(PassSummary),
    /// The schedule found the Lease held.
    Busy(Busy),
    /// The schedule's pass failed.
    Failed(Failure),
}

/// Handles one invocation: a scheduled event, or an SQS batch of timers.
pub async fn handle<C: Cluster, K: Cloud, P: Publisher, Q: Queue>(
    ctx: &Ctx<C, K, P>,
    queues: &Queues<'_, Q>,
    holder: &str,
    opts: &SweepOptions,
    event: &Invocation,
) -> Answer {
    let out = match event {
        Invocation::Queue(batch) => on_timers(ctx, queues, holder, opts, batch).await,
        Invocation::Schedule(_) => scheduled(ctx, queues, holder, opts).await,
    };
    flush_metrics(ctx);
    out
}

async fn on_timers<C: Cluster, K: Cloud, P: Publisher, Q: Queue>(
    ctx: &Ctx<C, K, P>,
    queues: &Queues<'_, Q>,
    holder: &str,
    opts: &SweepOptions,
    batch: &SqsEvent,
) -> Answer {
    let wake = read_timers(ctx, queues.timers, batch).await;
    if !wake.pass {
        return Answer::Batch(batch_failures(&[]));
    }
    match run(ctx, queues, holder, opts, &wake.pod_events).await {
        Ok(Some(r)) => Answer::Pass(PassSummary {
            batch: Some(batch_failures(&[])),
            ..PassSummary::of(&r)
        }),
        Ok(None) => {
            // Another decision runs now; this pass comes a little later, not a minute later.
            let later = ctx.now() + jiff::SignedDuration::from_secs(BUSY_RETRY_SECS);
            if !crate::disrupt::set_timer(ctx, queues.timers, TimerKind::Requeue, later, &[]).await
            {
                return Answer::Batch(fail_all(batch));
            }
            Answer::Batch(batch_failures(&[]))
        }
        Err(e) => {
            ctx.log.error(
                DISRUPTION,
                "disruption pass failed",
                json!({"error": e.to_string()}),
            );
            Answer::Batch(fail_all(batch))
        }
    }
}

/// Seconds before a pass that found the Lease held runs again.
pub const BUSY_RETRY_SECS: i64 = 2;

async fn scheduled<C: Cluster, K: Cloud, P: Publisher, Q: Queue>(
    ctx: &Ctx<C, K, P>,
    queues: &Queues<'_, Q>,
    holder: &str,
    opts: &SweepOptions,
) -> Answer {
    let health = health::poll(ctx, queues.termination, &InterruptOptions::default()).await;
    match run(ctx, queues, holder, opts, &[]).await {
        Ok(Some(r)) => Answer::Pass(PassSummary {
            unhealthy: Some(health.terminated),
            ..PassSummary::of(&r)
        }),
        Ok(None) => Answer::Busy(Busy::default()),
        Err(e) => {
            ctx.log.error(
                DISRUPTION,
                "disruption sweep failed",
                json!({"error": e.to_string()}),
            );
            Answer::Failed(Failure::new(e.to_string()))
        }
    }
}

/// A pass again, now (for the other functions: a command completed).
pub async fn wake<C: Cluster, K: Cloud, P: Publisher, Q: Queue>(
    ctx: &Ctx<C, K, P>,
    timers: &Q,
    why: &str,
) {
    requeue(ctx, timers, why).await;
}
