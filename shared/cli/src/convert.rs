//! Reads input documents into typed objects, naming the field on failure. The conversion of
//! those objects into the engine's model is `kerf_convert`, shared with the control layer.

pub use kerf_convert::{cluster, pod, volumes, workload};

use serde::de::DeserializeOwned;

use crate::error::CliError;
use crate::input::{Body, Doc};

/// Deserializes a document into a typed object; errors carry the field's path and, for a
/// YAML file, the field's line in it.
pub fn typed<T: DeserializeOwned>(doc: &Doc) -> Result<T, CliError> {
    // The fast path skips path tracking; only a failure is re-read to name the field.
    match &doc.body {
        Body::Json(raw) => serde_json::from_str(raw).or_else(|_| {
            let mut de = serde_json::Deserializer::from_str(raw);
            serde_path_to_error::deserialize(&mut de).map_err(|e| failed::<T>(doc, e))
        }),
    }
}

/// The error of a document that does not deserialize: the field, serde's message without
/// its position in the JSON the document was kept as, and the line in the user's YAML.
fn failed<T: DeserializeOwned>(
    doc: &Doc,
    e: serde_path_to_error::Error<serde_json::Error>,
) -> CliError {
    let field = e.path().to_string();
    let inner = e.into_inner();
    let mut message = inner.to_string();
    let position = format!(" at line {} column {}", inner.line(), inner.column());
    if let Some(m) = message.strip_suffix(&position) {
        message = m.to_string();
    }
    if let Some(line) = yaml_line::<T>(doc, &field) {
        message.push_str(&format!(" at line {line}"));
    }
    CliError::Input {
        at: doc.at.clone(),
        field,
        message,
    }
}

/// The line of `field` in the YAML file `doc` came from: the file's document read again
/// straight into `T`, when that fails at the same field (a List's items, stdin and JSON
/// files give none).
fn yaml_line<T: DeserializeOwned>(doc: &Doc, field: &str) -> Option<usize> {
    let file = &doc.at.file;
    if file == "-" || file.ends_with(".json") {
        return None;
    }
    let text = std::fs::read_to_string(file).ok()?;
    let de = yaml_serde::Deserializer::from_str(&text).nth(doc.at.document.checked_sub(1)?)?;
    match serde_path_to_error::deserialize::<_, T>(de) {
        Err(e) if e.path().to_string() == field => e.inner().location().map(|l| l.line()),
        _ => None,
    }
}
