//! The termination function: an SQS batch of `{"nodeClaim": "<name>"}` messages, each one
//! pass of the termination state machine ([`crate::terminate`]). A pass that must wait
//! re-queues its message with `DelaySeconds` before the batch is acknowledged; only messages
//! that failed transiently (and could not be re-queued) come back as batch item failures.
//! An unreadable message is logged and dropped: retrying it would never succeed. A batch that
//! finished a termination wakes the disruption function (a timer on its queue): the budget
//! that node held is free, so the next command need not wait for the schedule.

use futures::StreamExt;
use futures::stream;
use serde_json::json;

use super::events::{SqsBatchResponse, SqsEvent, SqsMessage, batch_failures, body};
use super::flush_metrics;
use crate::ctx::Ctx;
use crate::log::controllers::TERMINATION;
use crate::ports::{Cloud, Cluster, Publisher, Queue, TerminationMessage};
use crate::terminate::{Step, terminate};

/// What one message came to.
enum Outcome {
    Done,
    Pending,
    /// Retry it (its message id).
    Failed(String),
}

async fn one<C: Cluster, K: Cloud, P: Publisher, Q: Queue>(
    ctx: &Ctx<C, K, P>,
    queue: &Q,
    record: &SqsMessage,
) -> Outcome {
    let id = record.message_id.clone().unwrap_or_default();
    let body = body(record);
    let Some(name) = TerminationMessage::parse(body).map(|m| m.node_claim) else {
        ctx.log.error(
            TERMINATION,
            "dropping unreadable termination message",
            json!({"messageId": id, "body": body}),
        );
        return Outcome::Pending;
    };
    match terminate(ctx, &name).await {
        Ok(Step::Done) => Outcome::Done,
        Ok(Step::Requeue { seconds, why }) => {
            ctx.log.debug(
                TERMINATION,
                "termination waiting",
                json!({"NodeClaim": {"name": name}, "why": why, "requeueAfter": seconds}),
            );
            match queue.send(body, seconds).await {
                Ok(_) => Outcome::Pending,
                Err(_) => Outcome::Failed(id),
            }
        }
        Err(e) if e.is_retryable() => {
            ctx.log.warn(
                TERMINATION,
                "termination step failed; retrying",
                json!({"NodeClaim": {"name": name}, "error": e.to_string()}),
            );
            Outcome::Failed(id)
        }
        Err(e) => {
            ctx.log.error(
                TERMINATION,
                "termination step failed",
                json!({"NodeClaim": {"name": name}, "error": e.to_string()}),
            );
            Outcome::Pending
        }
    }
}

/// Handles one SQS batch; `disruption` is the disruption function's timer queue.
pub async fn handle<C: Cluster, K: Cloud, P: Publisher, Q: Queue>(
    ctx: &Ctx<C, K, P>,
    queue: &Q,
    disruption: &Q,
    batch: &SqsEvent,
) -> SqsBatchResponse {
    let mut records: Vec<&SqsMessage> = batch.records.iter().collect();
    // Several messages for one NodeClaim in a batch are one pass: the rest are redundant.
    let mut seen = std::collections::BTreeSet::new();
    records.retain(|r| {
        let claim = TerminationMessage::parse(body(r)).map(|m| m.node_claim);
        claim.is_none_or(|c| seen.insert(c))
    });
    let outcomes: Vec<Outcome> = stream::iter(records.into_iter().map(|r| one(ctx, queue, r)))
        .buffer_unordered(ctx.settings.concurrency.max(1))
        .collect()
        .await;
    if outcomes.iter().any(|o| matches!(o, Outcome::Done)) {
        crate::disrupt::requeue(ctx, disruption, "a termination completed").await;
    }
    let failed: Vec<String> = outcomes
        .into_iter()
        .filter_map(|o| match o {
            Outcome::Failed(id) => Some(id),
            _ => None,
        })
        .collect();
    flush_metrics(ctx);
    batch_failures(&failed)
}
