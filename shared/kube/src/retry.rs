//! The adapter's one retry loop, with two policies. A read-modify-write that meets a
//! Conflict reads again at once ([`on_conflict`]). A request that is safe to repeat and fails
//! transiently is tried again within the invocation ([`transient`]): three attempts, after
//! 25 ms then 50 ms, as the AWS SDK's standard retry mode does for EC2. A 5xx or a timeout
//! from the API server then costs milliseconds rather than the rest of an invocation (and a
//! minute until the next sweep).
//!
//! Safe to repeat: reads, and writes that converge when applied twice: conditional writes
//! (a resourceVersion precondition turns a repeat into a 409), merge patches, deletes by name
//! (404 is "already gone") and the Lease protocol (a repeat re-reads who holds it). A create
//! with `generateName` is never repeated: a timed-out create may have happened, and a second
//! NodeClaim would buy a second instance.

use std::future::Future;
use std::time::Duration;

use crate::error::ClusterError;

/// Attempts per request.
pub const ATTEMPTS: u32 = 3;

/// Attempts for read-modify-write loops before a Conflict is handed to the caller.
pub const CONFLICT_ATTEMPTS: u32 = 4;

/// The wait before attempt `attempt + 1` (25 ms, then 50 ms).
pub fn backoff(attempt: u32) -> Duration {
    Duration::from_millis(25 << attempt.saturating_sub(1).min(6))
}

/// Runs `f` again while it fails transiently, up to [`ATTEMPTS`] times; any other outcome
/// (success, conflict, not found, blocked, fatal) is returned as it is.
pub async fn transient<T, F, Fut>(f: F) -> Result<T, ClusterError>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, ClusterError>>,
{
    repeat(
        ATTEMPTS,
        |e| matches!(e, ClusterError::Transient(_)),
        Some(backoff),
        f,
    )
    .await
}

/// Runs a read-modify-write `f` again at once while it fails with Conflict (someone wrote
/// in between: read again), up to [`CONFLICT_ATTEMPTS`] times.
pub async fn on_conflict<T, F, Fut>(f: F) -> Result<T, ClusterError>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, ClusterError>>,
{
    repeat(CONFLICT_ATTEMPTS, ClusterError::is_conflict, None, f).await
}

/// The one retry loop: `f` again while `again` holds for its error, at most `attempts` times,
/// after `pause(attempt)` when given.
async fn repeat<T, F, Fut>(
    attempts: u32,
    again: fn(&ClusterError) -> bool,
    pause: Option<fn(u32) -> Duration>,
    mut f: F,
) -> Result<T, ClusterError>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, ClusterError>>,
{
    let mut attempt = 1;
    loop {
        match f().await {
            Err(e) if attempt < attempts && again(&e) => {
                if let Some(pause) = pause {
                    tokio::time::sleep(pause(attempt)).await;
                }
                attempt += 1;
            }
            other => return other,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    async fn run(outcomes: &[Result<u32, ClusterError>]) -> (Result<u32, ClusterError>, usize) {
        let calls = Cell::new(0);
        let r = transient(|| {
            let i = calls.get();
            calls.set(i + 1);
            let o = outcomes[i.min(outcomes.len() - 1)].clone();
            async move { o }
        })
        .await;
        (r, calls.get())
    }

    #[tokio::test]
    async fn transient_failures_are_tried_three_times_and_nothing_else_is_repeated() {
        let t = || ClusterError::Transient("504".into());
        assert_eq!(run(&[Err(t()), Ok(7)]).await, (Ok(7), 2));
        assert_eq!(run(&[Err(t()), Err(t()), Ok(7)]).await, (Ok(7), 3));
        assert_eq!(
            run(&[Err(t()), Err(t()), Err(t()), Ok(7)]).await,
            (Err(t()), 3)
        );
        let c = ClusterError::Conflict("409".into());
        assert_eq!(run(&[Err(c.clone()), Ok(7)]).await, (Err(c), 1));
        let n = ClusterError::NotFound("404".into());
        assert_eq!(run(&[Err(n.clone()), Ok(7)]).await, (Err(n), 1));
        let c = || ClusterError::Conflict("409".into());
        let calls = Cell::new(0);
        let r: Result<u32, _> = on_conflict(|| {
            calls.set(calls.get() + 1);
            async { Err(c()) }
        })
        .await;
        assert_eq!(
            (r, calls.get()),
            (Err(c()), 4),
            "conflicts: four reads in all"
        );
        assert_eq!(backoff(1), Duration::from_millis(25));
        assert_eq!(backoff(2), Duration::from_millis(50));
    }
}
