//! The interruption function: SQS batches from the interruption queue (spot warnings,
//! rebalance recommendations, state changes, scheduled changes, capacity-reservation
//! interruptions), see `handler.rs`.

mod handler;

use lambda_runtime::{Error, LambdaEvent, run, service_fn};
use serde_json::Value;

#[tokio::main]
async fn main() -> Result<(), Error> {
    kerf_function::tracing::init();
    let rt = kerf_function::Runtime::from_env().await?;
    let termination = rt.termination_queue()?;
    let (rt, termination) = (&rt, &termination);
    run(service_fn(move |ev: LambdaEvent<Value>| async move {
        handler::handle(rt, termination, ev.payload).await
    }))
    .await
}
