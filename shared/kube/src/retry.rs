//! Transient failures of requests that are safe to repeat are tried again at once, within
//! the invocation: three attempts, after 25 ms then 50 ms, as the AWS SDK's standard retry
//! mode does for EC2. A 5xx or a timeout from the API server then costs milliseconds rather
//! than the rest of an invocation (and a minute until the next sweep).
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

/// The wait before attempt `attempt + 1` (25 ms, then 50 ms).
pub fn backoff(attempt: u32) -> Duration {
    Duration::from_millis(25 << attempt.saturating_sub(1).min(6))
}

/// Runs `f` again while it fails transiently, up to [`ATTEMPTS`] times; any other outcome
/// (success, conflict, not found, blocked, fatal) is returned as it is.
pub async fn transient<T, F, Fut>(mut f: F) -> Result<T, ClusterError>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, ClusterError>>,
{
    let mut attempt = 1;
    loop {
        match f().await {
            Err(ClusterError::Transient(_)) if attempt < ATTEMPTS => {
                tokio::time::sleep(backoff(attempt)).await;
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
        assert_eq!(backoff(1), Duration::from_millis(25));
        assert_eq!(backoff(2), Duration::from_millis(50));
    }
}
