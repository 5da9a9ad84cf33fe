//! How kube-rs failures map onto the port's `ClusterError`, typed by what the caller should do.

use std::time::Duration;

pub use kerf_control::ports::ClusterError;

/// `?` for kube results: classifies a `kube::Error` into the port's [`ClusterError`].
pub trait KubeResult<T> {
    fn kube(self) -> Result<T, ClusterError>;
}

impl<T> KubeResult<T> for Result<T, kube::Error> {
    fn kube(self) -> Result<T, ClusterError> {
        self.map_err(classify)
    }
}

/// The server's message and causes, any URL in them scrubbed: a failed webhook call quotes
/// the webhook's URL, and these messages end up in conditions, Events and logs.
fn status_message(s: &kube::core::Status) -> String {
    kerf_control::redact::scrubbed(&raw_status_message(s))
}

fn raw_status_message(s: &kube::core::Status) -> String {
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

/// The port error for a kube-rs error.
pub fn classify(e: kube::Error) -> ClusterError {
    match e {
        kube::Error::Api(s) => {
            let msg = status_message(&s);
            match s.code {
                404 => ClusterError::NotFound(msg),
                409 => ClusterError::Conflict(msg),
                429 => {
                    let secs = s
                        .details
                        .as_ref()
                        .map(|d| d.retry_after_seconds)
                        .unwrap_or(0);
                    let retry_after = (secs > 0).then(|| Duration::from_secs(u64::from(secs)));
                    ClusterError::Blocked {
                        retry_after,
                        message: msg,
                    }
                }
                408 | 410 | 500..=599 => ClusterError::Transient(msg),
                _ => ClusterError::Fatal(msg),
            }
        }
        kube::Error::HyperError(_) | kube::Error::Service(_) | kube::Error::HttpError(_) => {
            ClusterError::Transient(kerf_control::redact::scrubbed(&e.to_string()))
        }
        other => ClusterError::Fatal(kerf_control::redact::scrubbed(&other.to_string())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retryable() {
        assert!(ClusterError::Conflict("x".into()).is_retryable());
        assert!(ClusterError::Transient("x".into()).is_retryable());
        assert!(
            ClusterError::Blocked {
                retry_after: None,
                message: "x".into()
            }
            .is_retryable()
        );
        assert!(!ClusterError::NotFound("x".into()).is_retryable());
        assert!(!ClusterError::Fatal("x".into()).is_retryable());
    }

    #[test]
    fn a_failed_webhook_call_loses_the_webhooks_url() {
        let status = kube::core::Status {
            code: 500,
            reason: "InternalError".into(),
            message: r#"Internal error occurred: failed calling webhook "validate.kerf.sh": Post "https://u.lambda-url.eu-west-1.on.aws/s3cret/validate?timeout=10s": EOF"#.into(),
            ..Default::default()
        };
        let e = classify(kube::Error::Api(Box::new(status)));
        let text = e.to_string();
        assert!(matches!(e, ClusterError::Transient(_)), "{text}");
        assert!(!text.contains("s3cret"), "{text}");
        assert!(
            text.contains("https://u.lambda-url.eu-west-1.on.aws/<redacted>"),
            "{text}"
        );
    }
}
