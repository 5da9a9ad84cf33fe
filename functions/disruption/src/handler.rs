//! A scheduled event or an SQS batch of timer messages in, the pass's summary (or the batch
//! response) out. The invocation's request id is its identity on the decision Lease;
//! `SpotToSpotConsolidation` comes from `KERF_FEATURE_GATES`. A scheduled sweep that fails
//! (or a Kubernetes client that cannot be built) fails the invocation, so the function's
//! Errors metric and alarm see it; a timer batch whose pass fails comes back as batch item
//! failures.

use kerf_aws::queue::SqsQueue;
use kerf_control::disrupt::{Queues, SweepOptions};
use kerf_control::handlers::disruption::{self, Answer};
use kerf_control::handlers::events::Invocation;
use kerf_function::Runtime;

/// Why an invocation failed.
#[derive(Debug, thiserror::Error)]
pub enum SweepFailed {
    #[error("no kubernetes client: {0}")]
    Kube(String),
    #[error("disruption sweep failed: {0}")]
    Sweep(String),
}

/// Without a Kubernetes client: a timer batch comes back whole, a schedule fails.
fn without_client(event: &Invocation, error: String) -> Result<Answer, SweepFailed> {
    match event {
        Invocation::Queue(_) => Ok(Answer::Batch(event.fail_all())),
        Invocation::Schedule(_) => Err(SweepFailed::Kube(error)),
    }
}

pub async fn handle(
    rt: &Runtime,
    termination: &SqsQueue,
    timers: &SqsQueue,
    request_id: &str,
    event: &Invocation,
) -> Result<Answer, lambda_runtime::Error> {
    let ctx = match rt.ctx_or("disruption", |e| without_client(event, e)).await {
        Ok(ctx) => ctx,
        Err(answer) => return Ok(answer?),
    };
    let opts = SweepOptions {
        spot_to_spot: rt.config.feature_gates.spot_to_spot_consolidation,
    };
    let queues = Queues {
        termination,
        timers,
    };
    match disruption::handle(&ctx, &queues, request_id, &opts, event).await {
        Answer::Failed(f) => Err(Box::new(SweepFailed::Sweep(f.error))),
        out => Ok(out),
    }
}
