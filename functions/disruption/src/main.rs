//! The disruption function: the pass that consolidates, drifts and expires nodes, on its
//! timer messages and on a schedule (see `handler.rs`).

mod handler;

use kerf_control::handlers::events::Invocation;
use lambda_runtime::{Error, LambdaEvent, run, service_fn};

#[tokio::main]
async fn main() -> Result<(), Error> {
    kerf_function::tracing::init();
    let rt = kerf_function::Runtime::from_env().await?;
    let termination = rt.termination_queue()?;
    let timers = rt.disruption_queue()?;
    let (rt, termination, timers) = (&rt, &termination, &timers);
    run(service_fn(move |ev: LambdaEvent<Invocation>| async move {
        handler::handle(rt, termination, timers, &ev.context.request_id, &ev.payload).await
    }))
    .await
}
