//! An SQS batch or a scheduled event in, the batch response (or the sweep's summary) out.
//! The invocation's request id is its identity on the decision Lease. A Kubernetes client
//! that cannot be built fails the whole batch (it is retried); nothing else does.

use kerf_aws::queue::SqsQueue;
use kerf_control::handlers::events::Invocation;
use kerf_control::handlers::provisioner::{self, Answer};
use kerf_function::Runtime;

pub async fn handle(
    rt: &Runtime,
    queue: &SqsQueue,
    request_id: &str,
    event: &Invocation,
) -> Result<Answer, lambda_runtime::Error> {
    match rt
        .ctx_or("provisioner", |_| Answer::Batch(event.fail_all()))
        .await
    {
        Ok(ctx) => Ok(provisioner::handle(&ctx, queue, request_id, event).await),
        Err(answer) => Ok(answer),
    }
}
