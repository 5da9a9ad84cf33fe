//! A scheduled event or an SQS batch of timer messages in, the pass's summary (or the batch
//! response) out. The invocation's request id is its identity on the decision Lease;
//! `SpotToSpotConsolidation` comes from `KERF_FEATURE_GATES`. A scheduled sweep that fails
//! (or a Kubernetes client that cannot be built) fails the invocation, so the function's
//! Errors metric and alarm see it; a timer batch whose pass fails comes back as batch item
//! failures.

use kerf_aws::queue::SqsQueue;
use kerf_control::disrupt::{Queues, SweepOptions};
use kerf_control::handlers::{batch_failures, disruption, message_ids};
use kerf_function::Runtime;
use serde_json::{Value, json};

/// Why an invocation failed.
#[derive(Debug, thiserror::Error)]
pub enum SweepFailed {
    #[error("no kubernetes client: {0}")]
    Kube(String),
    #[error("disruption sweep failed: {0}")]
    Sweep(String),
}

pub async fn handle(
    rt: &Runtime,
    termination: &SqsQueue,
    timers: &SqsQueue,
    request_id: &str,
    event: &Value,
) -> Result<Value, lambda_runtime::Error> {
    let ctx = match rt.ctx().await {
        Ok(ctx) => ctx,
        Err(e) => {
            let e = e.to_string();
            rt.log()
                .error("disruption", "no kubernetes client", json!({"error": e}));
            if event.get("Records").is_some() {
                return Ok(batch_failures(&message_ids(event)));
            }
            return Err(Box::new(SweepFailed::Kube(e)));
        }
    };
    let opts = SweepOptions {
        spot_to_spot: rt.config.feature_gates.spot_to_spot_consolidation,
    };
    let queues = Queues {
        termination,
        timers,
    };
    let out = disruption::handle(&ctx, &queues, request_id, &opts, event).await;
    if out["status"] == "failed" {
        let e = out["error"].as_str().unwrap_or_default().to_string();
        return Err(Box::new(SweepFailed::Sweep(e)));
    }
    Ok(out)
}
