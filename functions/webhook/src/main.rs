//! The webhook function: the Kubernetes API server's admission webhook, served from a Lambda
//! Function URL (see `handler.rs`).

mod handler;

use lambda_runtime::{Error, LambdaEvent, run, service_fn};
use serde_json::Value;

#[tokio::main]
async fn main() -> Result<(), Error> {
    kerf_function::tracing::init();
    let rt = kerf_function::Runtime::from_env().await?;
    let secret = rt.webhook_secret().await?;
    let queue = rt.queue()?;
    let timers = rt.disruption_queue()?;
    let (rt, secret, queue, timers) = (&rt, secret.as_str(), &queue, &timers);
    run(service_fn(move |ev: LambdaEvent<Value>| async move {
        handler::handle(rt, queue, timers, secret, ev.payload).await
    }))
    .await
}
