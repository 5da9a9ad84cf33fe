//! The interruption function: SQS batches from the interruption queue (spot warnings,
//! rebalance recommendations, state changes, scheduled changes, capacity-reservation
//! interruptions), see `handler.rs`.

mod handler;

use kerf_control::handlers::events::SqsEvent;
use lambda_runtime::{Error, LambdaEvent, run, service_fn};

#[tokio::main]
async fn main() -> Result<(), Error> {
    kerf_function::tracing::init();
    let rt = kerf_function::Runtime::from_env().await?;
    let termination = rt.termination_queue()?;
    let (rt, termination) = (&rt, &termination);
    run(service_fn(move |ev: LambdaEvent<SqsEvent>| async move {
        handler::handle(rt, termination, &ev.payload).await
    }))
    .await
}
