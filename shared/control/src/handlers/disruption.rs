//! The disruption function: a scheduled event (every minute) polls instance health
//! ([`crate::interrupt::health`]) and runs one sweep under the decision Lease
//! ([`crate::disrupt::sweep`]); terminations go to the termination queue.

use serde_json::{Value, json};

use super::flush_metrics;
use crate::ctx::Ctx;
use crate::disrupt::{SweepOptions, SweepReport, sweep};
use crate::error::ControlError;
use crate::interrupt::InterruptOptions;
use crate::interrupt::health;
use crate::lease::with_lease;
use crate::log::controllers::DISRUPTION;
use crate::ports::{Cloud, Cluster, Publisher, Queue};

/// One sweep under the Lease; `Ok(None)` when another decision holds it.
pub async fn run<C: Cluster, K: Cloud, P: Publisher, Q: Queue>(
    ctx: &Ctx<C, K, P>,
    termination: &Q,
    holder: &str,
    opts: &SweepOptions,
) -> Result<Option<SweepReport>, ControlError> {
    Ok(with_lease(ctx, holder, || async {
        sweep(ctx, termination, opts).await
    })
    .await?
    .ok())
}

/// Handles one scheduled invocation: the instance-status poll (Karpenter's runs every minute
/// too), then the sweep.
pub async fn handle<C: Cluster, K: Cloud, P: Publisher, Q: Queue>(
    ctx: &Ctx<C, K, P>,
    termination: &Q,
    holder: &str,
    opts: &SweepOptions,
) -> Value {
    let health = health::poll(ctx, termination, &InterruptOptions::default()).await;
    let out = match run(ctx, termination, holder, opts).await {
        Ok(Some(r)) => json!({"status": "ok", "started": r.started, "recorded": r.recorded,
            "finished": r.progress.finished, "rolledBack": r.progress.rolled_back,
            "drifted": r.drifted.len(), "skipped": r.skipped,
            "unhealthy": health.terminated}),
        Ok(None) => json!({"status": "busy"}),
        Err(e) => {
            ctx.log.error(
                DISRUPTION,
                "disruption sweep failed",
                json!({"error": e.to_string()}),
            );
            json!({"status": "failed", "error": e.to_string()})
        }
    };
    flush_metrics(ctx);
    out
}
