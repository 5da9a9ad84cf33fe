//! The webhook function: the Kubernetes API server's admission webhook, served from a Lambda
//! Function URL (see `handler.rs`).

mod handler;

use lambda_runtime::{Error, LambdaEvent, run, service_fn, tracing};
use serde_json::Value;

#[tokio::main]
async fn main() -> Result<(), Error> {
    tracing::init_default_subscriber();
    let rt = kerf_function::Runtime::from_env().await?;
    let secret = rt.webhook_secret().await?;
    let queue = rt.queue()?;
    let (rt, secret, queue) = (&rt, secret.as_str(), &queue);
    run(service_fn(move |ev: LambdaEvent<Value>| async move {
        handler::handle(rt, queue, secret, ev.payload).await
    }))
    .await
}
