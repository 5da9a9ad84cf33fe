//! An SQS batch of interruption messages in, the batch response out: only the messages whose
//! handling failed transiently come back. `RebalanceReplacement` comes from
//! `KERF_FEATURE_GATES`. A Kubernetes client that cannot be built fails the whole batch (it is
//! retried, then dead-lettered).

use kerf_aws::queue::SqsQueue;
use kerf_control::handlers::{batch_failures, interruption, message_ids};
use kerf_control::interrupt::InterruptOptions;
use kerf_function::Runtime;
use serde_json::{Value, json};

pub async fn handle(
    rt: &Runtime,
    termination: &SqsQueue,
    event: Value,
) -> Result<Value, lambda_runtime::Error> {
    let opts = InterruptOptions {
        rebalance_replacement: rt.config.feature_gates.rebalance_replacement,
    };
    match rt.ctx().await {
        Ok(ctx) => Ok(interruption::handle(&ctx, termination, &event, &opts).await),
        Err(e) => {
            rt.log().error(
                "interruption",
                "no kubernetes client",
                json!({"error": e.to_string()}),
            );
            Ok(batch_failures(&message_ids(&event)))
        }
    }
}
