//! Validation of custom resources as the Kubernetes API server does it: the CRD's structural
//! OpenAPI v3 schema (defaulting, pruning, types, formats, enums, lengths, patterns) and its
//! CEL rules (`x-kubernetes-validations`, a small interpreter in [`cel`]), with the
//! apiserver's field paths, cause reasons and messages.
//!
//! Pure: JSON in, causes out. The in-process API server validates every write with it, and
//! the admission webhook validates Kerf's CRDs with the very same rules.

pub mod cel;
pub mod schema;

/// One `details.causes[]` entry of a 422 Invalid.
#[derive(Debug, Clone, PartialEq)]
pub struct Cause {
    /// `FieldValueRequired`, `FieldValueInvalid`, ...
    pub reason: &'static str,
    /// Human message without the field prefix.
    pub message: String,
    /// Dotted field path, e.g. `spec.template.spec.requirements[0].operator`.
    pub field: String,
}

impl std::fmt::Display for Cause {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.field.is_empty() {
            write!(f, "{}", self.message)
        } else {
            write!(f, "{}: {}", self.field, self.message)
        }
    }
}
