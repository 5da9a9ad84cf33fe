//! The typed error every AWS port returns, and the classification of SDK errors into it.
//!
//! Callers decide from the variant alone whether to retry (`is_retryable`), re-plan
//! (`NoCapacity`), treat the call as done (`NotFound` on deletes) or give up.

use aws_sdk_ec2::config::http::HttpResponse;
use aws_sdk_ec2::error::{ProvideErrorMetadata, SdkError};

use kerf_catalog::unavailable::OfferingKey;

/// What went wrong in one AWS call, with the service's error code and message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ErrorInfo {
    /// The API operation, e.g. `CreateFleet`.
    pub operation: &'static str,
    /// The service error code, e.g. `RequestLimitExceeded`, or a local tag such as `timeout`.
    pub code: String,
    pub message: String,
}

impl std::fmt::Display for ErrorInfo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} failed ({}): {}",
            self.operation, self.code, self.message
        )
    }
}

/// Errors of the AWS ports.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum AwsError {
    /// Every offering tried failed for capacity; the caller should re-plan without them.
    #[error("no capacity for any of {} offerings", .0.len())]
    NoCapacity(Vec<OfferingKey>),
    #[error("not found: {0}")]
    NotFound(ErrorInfo),
    #[error("throttled: {0}")]
    Throttled(ErrorInfo),
    #[error("unauthorized: {0}")]
    Unauthorized(ErrorInfo),
    #[error("invalid request: {0}")]
    InvalidRequest(ErrorInfo),
    /// Network failures, timeouts, 5xx and unreadable responses.
    #[error("transient: {0}")]
    Transient(ErrorInfo),
}

impl AwsError {
    /// True when the same call may succeed later (throttling, timeouts, 5xx).
    pub fn is_retryable(&self) -> bool {
        matches!(self, AwsError::Throttled(_) | AwsError::Transient(_))
    }

    /// True for `NotFound`.
    pub fn is_not_found(&self) -> bool {
        matches!(self, AwsError::NotFound(_))
    }

    /// A local error about a response the adapter cannot use.
    pub fn bad_response(operation: &'static str, message: impl Into<String>) -> AwsError {
        AwsError::Transient(info(operation, "BadResponse", message))
    }

    /// A local error about a request the adapter refuses to send.
    pub fn invalid(operation: &'static str, message: impl Into<String>) -> AwsError {
        AwsError::InvalidRequest(info(operation, "InvalidInput", message))
    }
}

fn info(operation: &'static str, code: &str, message: impl Into<String>) -> ErrorInfo {
    ErrorInfo {
        operation,
        code: code.to_string(),
        message: message.into(),
    }
}

/// Classifies any AWS SDK error (all service crates share `SdkError`).
pub fn from_sdk<E>(operation: &'static str, err: SdkError<E, HttpResponse>) -> AwsError
where
    E: ProvideErrorMetadata + std::error::Error + 'static,
{
    match &err {
        SdkError::ConstructionFailure(_) => {
            AwsError::InvalidRequest(info(operation, "ConstructionFailure", detail(&err)))
        }
        SdkError::TimeoutError(_) => AwsError::Transient(info(operation, "Timeout", detail(&err))),
        SdkError::DispatchFailure(d) => {
            let code = if d.is_timeout() {
                "Timeout"
            } else {
                "DispatchFailure"
            };
            AwsError::Transient(info(operation, code, detail(&err)))
        }
        SdkError::ResponseError(_) => {
            AwsError::Transient(info(operation, "ResponseError", detail(&err)))
        }
        SdkError::ServiceError(se) => {
            let status = se.raw().status().as_u16();
            let code = se.err().code().unwrap_or("Unknown").to_string();
            let message = se.err().message().unwrap_or_default().to_string();
            classify_code(
                ErrorInfo {
                    operation,
                    code,
                    message,
                },
                status,
            )
        }
        _ => AwsError::Transient(info(operation, "Unknown", detail(&err))),
    }
}

/// The full error chain as one line (the SDK's top-level Display is terse).
fn detail(err: &dyn std::error::Error) -> String {
    let mut out = err.to_string();
    let mut source = err.source();
    while let Some(s) = source {
        out.push_str(": ");
        out.push_str(&s.to_string());
        source = s.source();
    }
    out
}

const THROTTLING: &[&str] = &[
    "RequestLimitExceeded",
    "Throttling",
    "ThrottlingException",
    "ThrottledException",
    "RequestThrottled",
    "RequestThrottledException",
    "TooManyRequestsException",
    "SlowDown",
    "EC2ThrottledException",
    "BandwidthLimitExceeded",
    "PriorRequestNotComplete",
];

const UNAUTHORIZED: &[&str] = &[
    "UnauthorizedOperation",
    "AuthFailure",
    "AccessDenied",
    "AccessDeniedException",
    "UnrecognizedClientException",
    "InvalidClientTokenId",
    "SignatureDoesNotMatch",
    "ExpiredToken",
    "ExpiredTokenException",
    "OptInRequired",
];

const NOT_FOUND: &[&str] = &[
    "ParameterNotFound",
    "ResourceNotFoundException",
    "AWS.SimpleQueueService.NonExistentQueue",
    "QueueDoesNotExist",
    "NotFoundException",
];

const TRANSIENT: &[&str] = &[
    "InternalError",
    "InternalFailure",
    "InternalServerError",
    "ServiceUnavailable",
    "Unavailable",
    "RequestTimeout",
    "RequestTimeoutException",
];

/// Maps a service error code (and HTTP status) to a variant.
pub fn classify_code(e: ErrorInfo, status: u16) -> AwsError {
    let code = e.code.as_str();
    if THROTTLING.contains(&code) || status == 429 {
        AwsError::Throttled(e)
    } else if UNAUTHORIZED.contains(&code) || status == 401 || status == 403 {
        AwsError::Unauthorized(e)
    } else if NOT_FOUND.contains(&code)
        || code.ends_with(".NotFound")
        || code.ends_with(".NotFoundException")
        || status == 404
    {
        AwsError::NotFound(e)
    } else if crate::fleet::is_capacity_code(code) {
        AwsError::NoCapacity(Vec::new())
    } else if TRANSIENT.contains(&code) || status >= 500 {
        AwsError::Transient(e)
    } else {
        AwsError::InvalidRequest(e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn class(code: &str, status: u16) -> AwsError {
        classify_code(info("Op", code, "m"), status)
    }

    #[test]
    fn throttling_and_5xx_are_retryable() {
        assert!(matches!(
            class("RequestLimitExceeded", 400),
            AwsError::Throttled(_)
        ));
        assert!(matches!(
            class("ThrottlingException", 400),
            AwsError::Throttled(_)
        ));
        assert!(matches!(class("Whatever", 503), AwsError::Transient(_)));
        assert!(class("Throttling", 400).is_retryable());
        assert!(class("InternalError", 500).is_retryable());
    }

    #[test]
    fn validation_is_not_retryable() {
        let e = class("InvalidParameterValue", 400);
        assert!(matches!(e, AwsError::InvalidRequest(_)));
        assert!(!e.is_retryable());
    }

    #[test]
    fn not_found_and_auth() {
        assert!(class("InvalidInstanceID.NotFound", 400).is_not_found());
        assert!(class("InvalidLaunchTemplateName.NotFoundException", 400).is_not_found());
        assert!(class("ParameterNotFound", 400).is_not_found());
        assert!(matches!(
            class("UnauthorizedOperation", 403),
            AwsError::Unauthorized(_)
        ));
    }

    #[test]
    fn capacity_codes_are_no_capacity() {
        assert!(matches!(
            class("InsufficientInstanceCapacity", 500),
            AwsError::NoCapacity(_)
        ));
    }
}
