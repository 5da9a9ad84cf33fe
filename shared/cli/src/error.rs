//! CLI errors: bad input (exit 2) names the file, document and field; the rest exit 1.

use std::fmt;

/// Where in the input something went wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Location {
    pub file: String,
    /// 1-based document index within the file.
    pub document: usize,
    /// `Kind/namespace/name` when known.
    pub object: String,
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: document {}", self.file, self.document)?;
        if !self.object.is_empty() {
            write!(f, " ({})", self.object)?;
        }
        Ok(())
    }
}

#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// Input that cannot be used (exit code 2).
    #[error("{at}: {field}: {message}")]
    Input {
        at: Location,
        field: String,
        message: String,
    },
    /// A file that cannot be read or parsed at all (exit code 2).
    #[error("{file}: {message}")]
    File { file: String, message: String },
    /// Bad flags (exit code 2).
    #[error("{0}")]
    Usage(String),
    /// An AWS call that failed (exit code 1).
    #[error("AWS: {0}")]
    Aws(String),
    /// Known but unfinished functionality (exit code 1).
    #[error("{0}")]
    NotImplemented(String),
    /// Anything else (exit code 1).
    #[error("{0}")]
    Internal(String),
}

impl CliError {
    pub fn exit_code(&self) -> i32 {
        match self {
            CliError::Input { .. } | CliError::File { .. } | CliError::Usage(_) => 2,
            CliError::Aws(_) | CliError::NotImplemented(_) | CliError::Internal(_) => 1,
        }
    }
}

pub use kerf_convert::FieldError;

/// Gives a conversion error its location in the input.
pub trait Locate {
    fn at(self, at: &Location) -> CliError;
}

impl Locate for FieldError {
    fn at(self, at: &Location) -> CliError {
        CliError::Input {
            at: at.clone(),
            field: self.field,
            message: self.message,
        }
    }
}
