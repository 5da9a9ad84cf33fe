//! The functions' handlers, as plain async functions over the ports: Lambda events in, typed as
//! the `aws_lambda_events` crate types them ([`events`]), Lambda responses out (batch item
//! failures, or the summaries of [`answers`]). The binaries under `functions/` bind them to
//! real adapters; `kerf sim` and the tests call the very same code with simulated ones.

pub mod answers;
pub mod disruption;
pub mod events;
pub mod interruption;
pub mod provisioner;
pub mod termination;
pub mod webhook;

use crate::ctx::Ctx;
use crate::ports::{Cloud, Cluster, Publisher};

/// Writes the invocation's metrics as CloudWatch embedded-metric lines.
pub fn flush_metrics<C: Cluster, K: Cloud, P: Publisher>(ctx: &Ctx<C, K, P>) {
    for doc in ctx.metrics.flush(ctx.now()) {
        ctx.log.raw(&doc);
    }
}
