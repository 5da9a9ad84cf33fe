//! The webhook function: the Kubernetes API server's admission webhook, served from a Lambda
//! Function URL (see `handler.rs`).

mod handler;

use kerf_control::handlers::events::FunctionUrlRequest;
use lambda_runtime::{Error, LambdaEvent, run, service_fn};

#[tokio::main]
async fn main() -> Result<(), Error> {
    kerf_function::tracing::init();
    let rt = kerf_function::Runtime::from_env().await?;
    let secret = rt.webhook_secret().await?;
    let queue = rt.queue()?;
    let timers = rt.disruption_queue()?;
    let (rt, secret, queue, timers) = (&rt, secret.as_str(), &queue, &timers);
    run(service_fn(
        move |ev: LambdaEvent<FunctionUrlRequest>| async move {
            handler::handle(rt, queue, timers, secret, &ev.payload).await
        },
    ))
    .await
}
