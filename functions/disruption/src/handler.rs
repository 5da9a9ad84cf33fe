//! A scheduled event in, the sweep's summary out. The invocation's request id is its identity
//! on the decision Lease; `SpotToSpotConsolidation` comes from `KERF_FEATURE_GATES`. A sweep
//! that fails (or a Kubernetes client that cannot be built) fails the invocation, so the
//! function's Errors metric and alarm see it; the next scheduled sweep starts over.

use kerf_aws::queue::SqsQueue;
use kerf_control::disrupt::SweepOptions;
use kerf_control::handlers::disruption;
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
    request_id: &str,
) -> Result<Value, lambda_runtime::Error> {
    let ctx = match rt.ctx().await {
        Ok(ctx) => ctx,
        Err(e) => {
            let e = e.to_string();
            rt.log()
                .error("disruption", "no kubernetes client", json!({"error": e}));
            return Err(Box::new(SweepFailed::Kube(e)));
        }
    };
    let opts = SweepOptions {
        spot_to_spot: rt.config.feature_gates.spot_to_spot_consolidation,
    };
    let out = disruption::handle(&ctx, termination, request_id, &opts).await;
    if out["status"] == "failed" {
        let e = out["error"].as_str().unwrap_or_default().to_string();
        return Err(Box::new(SweepFailed::Sweep(e)));
    }
    Ok(out)
}
