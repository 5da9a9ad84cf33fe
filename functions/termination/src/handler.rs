//! An SQS batch of termination messages in, the batch response out: each message is one pass
//! of the termination state machine, re-queued on the same queue while it must wait. A
//! Kubernetes client that cannot be built fails the whole batch (it is retried). A completed
//! termination wakes the disruption function through its timer queue.

use kerf_aws::queue::SqsQueue;
use kerf_control::handlers::{batch_failures, message_ids, termination};
use kerf_function::Runtime;
use serde_json::{Value, json};

pub async fn handle(
    rt: &Runtime,
    queue: &SqsQueue,
    timers: &SqsQueue,
    event: Value,
) -> Result<Value, lambda_runtime::Error> {
    match rt.ctx().await {
        Ok(ctx) => Ok(termination::handle(&ctx, queue, timers, &event).await),
        Err(e) => {
            rt.log().error(
                "termination",
                "no kubernetes client",
                json!({"error": e.to_string()}),
            );
            Ok(batch_failures(&message_ids(&event)))
        }
    }
}
