//! The provisioner function: SQS batches of provisioning hints and the scheduled sweep (see
//! `handler.rs`).

mod handler;

use kerf_control::handlers::events::Invocation;
use lambda_runtime::{Error, LambdaEvent, run, service_fn};

#[tokio::main]
async fn main() -> Result<(), Error> {
    kerf_function::tracing::init();
    let rt = kerf_function::Runtime::from_env().await?;
    let queue = rt.queue()?;
    let (rt, queue) = (&rt, &queue);
    run(service_fn(move |ev: LambdaEvent<Invocation>| async move {
        handler::handle(rt, queue, &ev.context.request_id, &ev.payload).await
    }))
    .await
}
