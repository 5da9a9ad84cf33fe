//! Converts Kubernetes objects into the engine's snapshot model, validating what the engine
//! relies on (quantities, operators, effects) and naming the field when something is wrong.

pub mod cluster;
pub mod pod;
pub mod workload;

use std::collections::BTreeMap;

use kerf_catalog::{Resources, quantity};
use serde::de::DeserializeOwned;

use crate::error::{CliError, FieldError};
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
        Body::Value(v) => serde::Deserialize::deserialize(v)
            .or_else(|_| serde_path_to_error::deserialize(v).map_err(fail)),
    }
}

/// Parses a `{name: Quantity}` map.
pub fn resources(
    field: &str,
    m: Option<&BTreeMap<String, k8s_openapi::apimachinery::pkg::api::resource::Quantity>>,
) -> Result<Resources, FieldError> {
    let mut r = Resources::new();
    for (k, v) in m.into_iter().flatten() {
        let q = quantity::parse(&v.0).map_err(|_| {
            FieldError::new(
                format!("{field}.{k}"),
                format!("invalid quantity {:?}", v.0),
            )
        })?;
        r.set(k, q);
    }
    Ok(r)
}

/// Parses an RFC3339 timestamp into Unix seconds.
pub fn timestamp(t: &k8s_openapi::apimachinery::pkg::apis::meta::v1::Time) -> i64 {
    t.0.as_second()
}

/// Labels of an object's metadata.
pub fn labels(
    meta: &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta,
) -> BTreeMap<String, String> {
    meta.labels.clone().unwrap_or_default()
}
