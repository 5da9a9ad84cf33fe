//! Reads input documents into typed objects, naming the field on failure. The conversion of
//! those objects into the engine's model is `kerf_convert`, shared with the control layer.

pub use kerf_convert::{cluster, pod, volumes, workload};

mod line;
pub mod path;

use serde::de::DeserializeOwned;

use crate::error::CliError;
use crate::input::{Body, Doc};
use path::{FieldPath, Segment};

/// Deserializes a document into a typed object; errors carry the field's path and, for a
/// YAML file, the field's line in it.
pub fn typed<T: DeserializeOwned>(doc: &Doc) -> Result<T, CliError> {
    match &doc.body {
        Body::Json(raw) => serde_json::from_str(raw).map_err(|e| failed(doc, raw, &e)),
    }
}

/// The error of a document that does not deserialize: the field, serde's message without
/// its position in the JSON the document was kept as, and the line in the user's YAML.
fn failed(doc: &Doc, raw: &str, e: &serde_json::Error) -> CliError {
    let field = path::of_error(raw, e);
    let mut message = e.to_string();
    let position = format!(" at line {} column {}", e.line(), e.column());
    if let Some(m) = message.strip_suffix(&position) {
        message = m.to_string();
    }
    if let Some(line) = yaml_line(doc, &field) {
        message.push_str(&format!(" at line {line}"));
    }
    CliError::Input {
        at: doc.at.clone(),
        field: field.to_string(),
        message,
    }
}

/// The line of `field` in the YAML file `doc` came from (stdin and JSON files give none);
/// an object from a List is looked for among the List's items.
fn yaml_line(doc: &Doc, field: &FieldPath) -> Option<usize> {
    let file = &doc.at.file;
    if file == "-" || file.ends_with(".json") {
        return None;
    }
    let text = std::fs::read_to_string(file).ok()?;
    let within = doc
        .item
        .iter()
        .flat_map(|&i| [Segment::Key("items".into()), Segment::Index(i)]);
    let full = FieldPath(within.chain(field.0.iter().cloned()).collect());
    line::of(&text, doc.at.document, &full)
}
