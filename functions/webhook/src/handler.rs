//! Function URL request in, Function URL response out: the admission review answered within
//! the deadline (a review still running after [`DEADLINE`] is answered by the fail-safe
//! rule: pods and nodes allowed, Kerf's CRDs refused), never an invocation error.

use std::time::Duration;

use kerf_aws::queue::SqsQueue;
use kerf_control::handlers::webhook::{HttpResponse, handle as review, timed_out};
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
    event: Value,
) -> Result<Value, lambda_runtime::Error> {
    let work = async {
        match rt.ctx().await {
            Ok(ctx) => review(&ctx, queue, timers, secret, &event).await,
            Err(e) => {
                rt.log().error(
                    "webhook",
                    "no kubernetes client",
                    json!({"error": e.to_string()}),
                );
                timed_out(&event)
            }
        }
    };
    let r = tokio::time::timeout(DEADLINE, work)
        .await
        .unwrap_or_else(|_| timed_out(&event));
    Ok(url_response(r))
}
