//! Lambda events written as JSON in the tests, read as the typed events the handlers take
//! (as the functions read them at their edge), and the handlers' answers as the JSON Lambda
//! returns. A payload that does not read is a test's mistake: it panics.
//!
//! The handlers' JSON forms ([`provisioner`], [`disruption`], [`interruption`],
//! [`termination`], [`webhook`]) take the event as JSON, read it, run the handler and answer
//! with its JSON: what a test sends and reads is then what Lambda would.

use kerf_control::ctx::Ctx;
use kerf_control::disrupt::{Queues, SweepOptions};
use kerf_control::handlers;
use kerf_control::handlers::events::{FunctionUrlRequest, Invocation, SqsEvent};
use kerf_control::handlers::webhook::HttpResponse;
use kerf_control::interrupt::InterruptOptions;
use kerf_control::ports::{Cloud, Cluster, Publisher, Queue};
use kerf_sim::world::SimQueue;
use kerf_sim::world::queue::Message;
use serde_json::Value;

pub use kerf_control::handlers::events::to_json;

/// An SQS batch.
pub fn sqs(event: &Value) -> SqsEvent {
    serde_json::from_value(event.clone()).unwrap_or_else(|e| panic!("an SQS batch: {e}\n{event}"))
}

/// An SQS batch or a scheduled event, for the provisioner or the disruption function.
pub fn invocation(event: &Value) -> Invocation {
    Invocation::from_json(event.clone()).unwrap_or_else(|e| panic!("{e}\n{event}"))
}

/// A Function URL request.
pub fn url(event: &Value) -> FunctionUrlRequest {
    serde_json::from_value(event.clone())
        .unwrap_or_else(|e| panic!("a Function URL request: {e}\n{event}"))
}

/// [`handlers::provisioner::handle`] on a JSON event.
pub async fn provisioner<C: Cluster, K: Cloud, P: Publisher, Q: Queue>(
    ctx: &Ctx<C, K, P>,
    queue: &Q,
    holder: &str,
    event: &Value,
) -> Value {
    to_json(&handlers::provisioner::handle(ctx, queue, holder, &invocation(event)).await)
}

/// [`handlers::disruption::handle`] on a JSON event.
pub async fn disruption<C: Cluster, K: Cloud, P: Publisher, Q: Queue>(
    ctx: &Ctx<C, K, P>,
    queues: &Queues<'_, Q>,
    holder: &str,
    opts: &SweepOptions,
    event: &Value,
) -> Value {
    let event = invocation(event);
    to_json(&handlers::disruption::handle(ctx, queues, holder, opts, &event).await)
}

/// [`handlers::interruption::handle`] on a JSON batch.
pub async fn interruption<C: Cluster, K: Cloud, P: Publisher, Q: Queue>(
    ctx: &Ctx<C, K, P>,
    termination: &Q,
    event: &Value,
    opts: &InterruptOptions,
) -> Value {
    to_json(&handlers::interruption::handle(ctx, termination, &sqs(event), opts).await)
}

/// [`handlers::termination::handle`] on a JSON batch.
pub async fn termination<C: Cluster, K: Cloud, P: Publisher, Q: Queue>(
    ctx: &Ctx<C, K, P>,
    queue: &Q,
    disruption: &Q,
    event: &Value,
) -> Value {
    to_json(&handlers::termination::handle(ctx, queue, disruption, &sqs(event)).await)
}

/// [`handlers::webhook::handle`] on a JSON Function URL request.
pub async fn webhook<C: Cluster, K: Cloud, P: Publisher, Q: Queue>(
    ctx: &Ctx<C, K, P>,
    queue: &Q,
    disruption: &Q,
    secret: &str,
    event: &Value,
) -> HttpResponse {
    handlers::webhook::handle(ctx, queue, disruption, secret, &url(event)).await
}

/// The SQS batch of `messages` (as the simulated queue's event source mapping delivers it),
/// as JSON.
pub fn batch(messages: &[Message]) -> Value {
    to_json(&SimQueue::event(messages))
}
