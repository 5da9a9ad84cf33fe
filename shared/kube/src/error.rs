//! `KubeError`: every failure of the Cluster port, typed by what the caller should do.

use std::time::Duration;

/// A failed cluster operation.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KubeError {
    /// The object does not exist (404).
    #[error("not found: {0}")]
    NotFound(String),
    /// Stale resourceVersion, failed precondition, or name taken (409): re-read and retry.
    #[error("conflict: {0}")]
    Conflict(String),
    /// The server refused for now, e.g. a PodDisruptionBudget blocks an eviction (429).
    #[error("blocked: {message}")]
    Blocked {
        /// Server hint, when given (`Retry-After` / `details.retryAfterSeconds`).
        retry_after: Option<Duration>,
        /// The server's message and causes.
        message: String,
    },
    /// Network trouble, timeouts, 5xx, expired lists: retry with backoff.
    #[error("transient: {0}")]
    Transient(String),
    /// Invalid request, forbidden, unauthorized, undecodable: retrying will not help.
    #[error("fatal: {0}")]
    Fatal(String),
}

impl KubeError {
    /// Whether retrying later can succeed.
    pub fn is_retryable(&self) -> bool {
        matches!(
            self,
            Self::Conflict(_) | Self::Blocked { .. } | Self::Transient(_)
        )
    }

    /// Whether this is a 404.
    pub fn is_not_found(&self) -> bool {
        matches!(self, Self::NotFound(_))
    }

    /// Whether this is a 409.
    pub fn is_conflict(&self) -> bool {
        matches!(self, Self::Conflict(_))
    }
}

fn status_message(s: &kube::core::Status) -> String {
    let causes: Vec<String> = s
        .details
        .as_ref()
        .map(|d| {
            d.causes
                .iter()
                .map(|c| format!("{}: {}", c.reason, c.message))
                .collect()
        })
        .unwrap_or_default();
    if causes.is_empty() {
        format!("{} ({} {})", s.message, s.code, s.reason)
    } else {
        format!(
            "{} ({} {}; {})",
            s.message,
            s.code,
            s.reason,
            causes.join("; ")
        )
    }
}

impl From<kube::Error> for KubeError {
    fn from(e: kube::Error) -> Self {
        match e {
            kube::Error::Api(s) => {
                let msg = status_message(&s);
                match s.code {
                    404 => Self::NotFound(msg),
                    409 => Self::Conflict(msg),
                    429 => {
                        let secs = s
                            .details
                            .as_ref()
                            .map(|d| d.retry_after_seconds)
                            .unwrap_or(0);
                        let retry_after = (secs > 0).then(|| Duration::from_secs(u64::from(secs)));
                        Self::Blocked {
                            retry_after,
                            message: msg,
                        }
                    }
                    408 | 410 | 500..=599 => Self::Transient(msg),
                    _ => Self::Fatal(msg),
                }
            }
            kube::Error::HyperError(_) | kube::Error::Service(_) | kube::Error::HttpError(_) => {
                Self::Transient(e.to_string())
            }
            other => Self::Fatal(other.to_string()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retryable() {
        assert!(KubeError::Conflict("x".into()).is_retryable());
        assert!(KubeError::Transient("x".into()).is_retryable());
        assert!(
            KubeError::Blocked {
                retry_after: None,
                message: "x".into()
            }
            .is_retryable()
        );
        assert!(!KubeError::NotFound("x".into()).is_retryable());
        assert!(!KubeError::Fatal("x".into()).is_retryable());
    }
}
