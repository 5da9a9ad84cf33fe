//! An SQS batch of interruption messages in, the batch response out: only the messages whose
//! handling failed transiently come back. `RebalanceReplacement` comes from
//! `KERF_FEATURE_GATES`. A Kubernetes client that cannot be built fails the whole batch (it is
//! retried, then dead-lettered).

use kerf_aws::queue::SqsQueue;
use kerf_control::handlers::events::{SqsBatchResponse, SqsEvent, fail_all};
use kerf_control::handlers::interruption;
use kerf_control::interrupt::InterruptOptions;
use kerf_function::Runtime;

pub async fn handle(
    rt: &Runtime,
    termination: &SqsQueue,
    batch: &SqsEvent,
) -> Result<SqsBatchResponse, lambda_runtime::Error> {
    let opts = InterruptOptions {
        rebalance_replacement: rt.config.feature_gates.rebalance_replacement,
    };
    match rt.ctx_or("interruption", |_| fail_all(batch)).await {
        Ok(ctx) => Ok(interruption::handle(&ctx, termination, batch, &opts).await),
        Err(answer) => Ok(answer),
    }
}
