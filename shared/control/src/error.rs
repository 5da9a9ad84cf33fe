//! `ControlError`: why a reconcile stopped, and whether running it again can help.

use crate::ports::{CloudError, ClusterError, QueueError};

/// A failed reconcile.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ControlError {
    #[error("cluster: {0}")]
    Cluster(#[from] ClusterError),
    #[error("cloud: {0}")]
    Cloud(#[from] CloudError),
    #[error("queue: {0}")]
    Queue(#[from] QueueError),
    /// Input Kerf cannot act on (a malformed object, an event it does not understand).
    #[error("invalid: {0}")]
    Invalid(String),
}

impl ControlError {
    /// Whether the same reconcile may succeed later (the message should be retried).
    pub fn is_retryable(&self) -> bool {
        match self {
            ControlError::Cluster(e) => e.is_retryable(),
            ControlError::Cloud(e) => e.is_retryable(),
            ControlError::Queue(e) => e.retryable,
            ControlError::Invalid(_) => false,
        }
    }
}
