//! The interruption function: an SQS batch from the interruption queue (EventBridge rules
//! for spot warnings, rebalance recommendations, state changes, scheduled changes and
//! capacity-reservation interruptions) handled by [`crate::interrupt`]; only the messages
//! that failed transiently come back in `batchItemFailures`.

use serde_json::Value;

use super::{batch_failures, flush_metrics};
use crate::ctx::Ctx;
use crate::interrupt::{InterruptOptions, Message, handle_batch};
use crate::metrics::names::INTERRUPTION_DELETED;
use crate::ports::{Cloud, Cluster, Publisher, Queue};

/// The messages of an SQS event.
pub fn messages(event: &Value) -> Vec<Message> {
    event["Records"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|r| {
            Some(Message {
                id: r["messageId"].as_str()?.to_string(),
                body: r["body"].as_str().unwrap_or_default().to_string(),
                sent: r["attributes"]["SentTimestamp"]
                    .as_str()
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
    event: &Value,
    opts: &InterruptOptions,
) -> Value {
    let batch = messages(event);
    let report = handle_batch(ctx, termination, &batch, opts).await;
    ctx.metrics
        .count(INTERRUPTION_DELETED, &[], report.deleted as f64);
    flush_metrics(ctx);
    batch_failures(&report.failed)
}
