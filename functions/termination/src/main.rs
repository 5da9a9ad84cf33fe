//! The termination function: SQS batches of NodeClaims to drain and terminate (see
//! `handler.rs`).

mod handler;

use lambda_runtime::{Error, LambdaEvent, run, service_fn};
use serde_json::Value;

#[tokio::main]
async fn main() -> Result<(), Error> {
    kerf_function::tracing::init();
    let rt = kerf_function::Runtime::from_env().await?;
    let queue = rt.termination_queue()?;
    let timers = rt.disruption_queue()?;
    let (rt, queue, timers) = (&rt, &queue, &timers);
    run(service_fn(move |ev: LambdaEvent<Value>| async move {
        handler::handle(rt, queue, timers, ev.payload).await
    }))
    .await
}
