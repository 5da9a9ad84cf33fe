//! The termination function: SQS batches of NodeClaims to drain and terminate (see
//! `handler.rs`).

mod handler;

use kerf_control::handlers::events::SqsEvent;
use lambda_runtime::{Error, LambdaEvent, run, service_fn};

#[tokio::main]
async fn main() -> Result<(), Error> {
    kerf_function::tracing::init();
    let rt = kerf_function::Runtime::from_env().await?;
    let queue = rt.termination_queue()?;
    let timers = rt.disruption_queue()?;
    let (rt, queue, timers) = (&rt, &queue, &timers);
    run(service_fn(move |ev: LambdaEvent<SqsEvent>| async move {
        handler::handle(rt, queue, timers, &ev.payload).await
    }))
    .await
}
