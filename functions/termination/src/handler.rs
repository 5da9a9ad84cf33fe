//! An SQS batch of termination messages in, the batch response out: each message is one pass
//! of the termination state machine, re-queued on the same queue while it must wait. A
//! Kubernetes client that cannot be built fails the whole batch (it is retried). A completed
//! termination wakes the disruption function through its timer queue.

use kerf_aws::queue::SqsQueue;
use kerf_control::handlers::events::{SqsBatchResponse, SqsEvent, fail_all};
use kerf_control::handlers::termination;
use kerf_function::Runtime;

pub async fn handle(
    rt: &Runtime,
    queue: &SqsQueue,
    timers: &SqsQueue,
    batch: &SqsEvent,
) -> Result<SqsBatchResponse, lambda_runtime::Error> {
    match rt.ctx_or("termination", |_| fail_all(batch)).await {
        Ok(ctx) => Ok(termination::handle(&ctx, queue, timers, batch).await),
        Err(answer) => Ok(answer),
    }
}
