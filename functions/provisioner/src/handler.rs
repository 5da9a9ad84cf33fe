//! An SQS batch or a scheduled event in, the batch response (or the sweep's summary) out.
//! The invocation's request id is its identity on the decision Lease. A Kubernetes client
//! that cannot be built fails the whole batch (it is retried); nothing else does.

use kerf_aws::queue::SqsQueue;
use kerf_control::handlers::{batch_failures, message_ids, provisioner};
use kerf_function::Runtime;
use serde_json::{Value, json};

pub async fn handle(
    rt: &Runtime,
    queue: &SqsQueue,
    request_id: &str,
    event: Value,
) -> Result<Value, lambda_runtime::Error> {
    match rt.ctx().await {
        Ok(ctx) => Ok(provisioner::handle(&ctx, queue, request_id, &event).await),
        Err(e) => {
            rt.log().error(
                "provisioner",
                "no kubernetes client",
                json!({"error": e.to_string()}),
            );
            Ok(batch_failures(&message_ids(&event)))
        }
    }
}
