//! The functions' handlers, as plain async functions over the ports: Lambda events (JSON) in,
//! Lambda responses out. The binaries under `functions/` bind them to real adapters; `kerf
//! sim` and the tests call the very same code with simulated ones.

pub mod disruption;
pub mod interruption;
pub mod provisioner;
pub mod termination;
pub mod webhook;

use serde_json::Value;

use crate::ctx::Ctx;
use crate::ports::{Cloud, Cluster, Publisher};

/// Writes the invocation's metrics as CloudWatch embedded-metric lines.
pub fn flush_metrics<C: Cluster, K: Cloud, P: Publisher>(ctx: &Ctx<C, K, P>) {
    for doc in ctx.metrics.flush(ctx.now()) {
        ctx.log.raw(&doc);
    }
}

/// The message ids of an SQS event (`Records[].messageId`).
pub fn message_ids(event: &Value) -> Vec<String> {
    event["Records"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|r| r["messageId"].as_str().map(str::to_string))
        .collect()
}

/// `{"batchItemFailures": [{"itemIdentifier": id}, …]}`.
pub fn batch_failures(ids: &[String]) -> Value {
    let items: Vec<Value> = ids
        .iter()
        .map(|id| serde_json::json!({ "itemIdentifier": id }))
        .collect();
    serde_json::json!({ "batchItemFailures": items })
}
