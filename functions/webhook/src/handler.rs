//! Function URL request in, Function URL response out: the admission review answered within
//! the deadline, never an invocation error. A request without the secret is refused before
//! any client is built; a review Kerf cannot act on (still running after [`DEADLINE`], or no
//! Kubernetes client) is answered from the object alone: pods and nodes allowed, Kerf's CRDs
//! validated.

use std::time::Duration;

use kerf_aws::queue::SqsQueue;
use kerf_control::handlers::events::FunctionUrlRequest;
use kerf_control::handlers::webhook::{
    HttpResponse, authorized, handle as review, timed_out, unauthorized,
};
use kerf_function::Runtime;
use serde_json::{Value, json};

/// The API server waits up to the webhook's timeout; Kerf answers well within it.
pub const DEADLINE: Duration = Duration::from_millis(1800);

fn url_response(r: HttpResponse) -> Value {
    json!({"statusCode": r.status, "headers": {"content-type": "application/json"}, "body": r.body.to_string()})
}

pub async fn handle(
    rt: &Runtime,
    queue: &SqsQueue,
    timers: &SqsQueue,
    secret: &str,
    request: &FunctionUrlRequest,
) -> Result<Value, lambda_runtime::Error> {
    let path = request.raw_path.as_deref().unwrap_or_default();
    if !authorized(path, secret) {
        return Ok(url_response(unauthorized(rt.log(), rt.now(), request)));
    }
    let work = async {
        match rt.ctx_or("webhook", |_| timed_out(request)).await {
            Ok(ctx) => review(&ctx, queue, timers, secret, request).await,
            Err(answer) => answer,
        }
    };
    let r = tokio::time::timeout(DEADLINE, work)
        .await
        .unwrap_or_else(|_| timed_out(request));
    Ok(url_response(r))
}
