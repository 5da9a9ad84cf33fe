//! The interruption function: an SQS batch from the interruption queue (EventBridge rules
//! for spot warnings, rebalance recommendations, state changes, scheduled changes and
//! capacity-reservation interruptions) handled by [`crate::interrupt`]; only the messages
//! that failed transiently come back in `batchItemFailures`.

use super::events::{SqsBatchResponse, SqsEvent, batch_failures, body};
use super::flush_metrics;
use crate::ctx::Ctx;
use crate::interrupt::{InterruptOptions, Message, handle_batch};
use crate::metrics::names::INTERRUPTION_DELETED;
use crate::ports::{Cloud, Cluster, Publisher, Queue};

/// The messages of an SQS batch (a record without a message id is left out).
pub fn messages(batch: &SqsEvent) -> Vec<Message> {
    batch
        .records
        .iter()
        .filter_map(|r| {
            Some(Message {
                id: r.message_id.clone()?,
                body: body(r).to_string(),
                sent: r
                    .attributes
                    .get("SentTimestamp")
                    .and_then(|t| t.parse::<i64>().ok())
                    .and_then(|ms| jiff::Timestamp::from_millisecond(ms).ok()),
            })
        })
        .collect()
}

/// Handles one SQS batch.
pub async fn handle<C: Cluster, K: Cloud, P: Publisher, Q: Queue>(
    ctx: &Ctx<C, K, P>,
    termination: &Q,
    batch: &SqsEvent,
    opts: &InterruptOptions,
) -> SqsBatchResponse {
    let messages = messages(batch);
    let report = handle_batch(ctx, termination, &messages, opts).await;
    ctx.metrics
        .count(INTERRUPTION_DELETED, &[], report.deleted as f64);
    flush_metrics(ctx);
    batch_failures(&report.failed)
}
