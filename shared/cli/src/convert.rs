//! Reads input documents into typed objects, naming the field on failure. The conversion of
//! those objects into the engine's model is `kerf_convert`, shared with the control layer.

pub use kerf_convert::{cluster, pod, workload};

use serde::de::DeserializeOwned;

use crate::error::CliError;
use crate::input::{Body, Doc};

/// Deserializes a document into a typed object; errors carry the JSON path.
pub fn typed<T: DeserializeOwned>(doc: &Doc) -> Result<T, CliError> {
    let fail = |e: serde_path_to_error::Error<serde_json::Error>| {
        let field = e.path().to_string();
        CliError::Input {
            at: doc.at.clone(),
            field,
            message: e.into_inner().to_string(),
        }
    };
    // The fast path skips path tracking; only a failure is re-read to name the field.
    match &doc.body {
        Body::Json(raw) => serde_json::from_str(raw.get()).or_else(|_| {
            let mut de = serde_json::Deserializer::from_str(raw.get());
            serde_path_to_error::deserialize(&mut de).map_err(fail)
        }),
    }
}
