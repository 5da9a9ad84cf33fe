//! Sending a timer ([`crate::ports::timer`]) from a reconciler: counted by kind, and a failed
//! send is only logged, because the schedule's next pass does the same work (a lost timer
//! costs latency, never correctness).

use jiff::Timestamp;
use serde_json::json;

use crate::claim;
use crate::ctx::Ctx;
use crate::metrics::names::TIMERS_SENT;
use crate::ports::{Cloud, Cluster, Publisher, Queue, Timer, TimerKind};

/// Sends a timer for `due` naming `objects`; whether it was sent. `controller` names who
/// logs a failure.
pub async fn set_timer<C: Cluster, K: Cloud, P: Publisher, Q: Queue>(
    ctx: &Ctx<C, K, P>,
    queue: &Q,
    controller: &str,
    kind: TimerKind,
    due: Timestamp,
    objects: &[String],
) -> bool {
    let t = Timer::new(kind, due, objects.to_vec());
    match t.send(queue, ctx.now()).await {
        Ok(_) => {
            ctx.metrics
                .count(TIMERS_SENT, &[("kind", kind.as_str())], 1.0);
            true
        }
        Err(e) => {
            ctx.log.warn(
                controller,
                "could not set a timer; the next scheduled pass does its work",
                json!({"kind": kind.as_str(), "due": claim::rfc3339(due), "error": e.to_string()}),
            );
            false
        }
    }
}
