//! The crate's error type.

use thiserror::Error;

/// Everything that can go wrong parsing, converting or rendering Karpenter API objects.
#[derive(Debug, Error)]
pub enum ApiError {
    /// A YAML document could not be parsed or rendered.
    #[error("YAML: {0}")]
    Yaml(#[from] yaml_serde::Error),
    /// A value could not be converted to or from JSON.
    #[error("JSON: {0}")]
    Json(#[from] serde_json::Error),
    /// A document of a known kind is missing something it needs.
    #[error("{object}: {message}")]
    Invalid {
        /// `Kind/name` of the offending object.
        object: String,
        /// What is wrong.
        message: String,
    },
    /// A duration string that is neither a Go-style duration nor `Never`.
    #[error("invalid duration {0:?}: expected e.g. \"720h\", \"1h30m\", \"30s\" or \"Never\"")]
    Duration(String),
}
