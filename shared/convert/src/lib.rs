//! Kubernetes objects (k8s-openapi and Kerf's CRD types) to the engine's snapshot model.
//!
//! Pure: no I/O. Used by `kerf plan` on manifests and by the control layer on the cluster
//! snapshot, so both decide on exactly the same model. Everything the engine relies on
//! (quantities, operators, effects) is validated here, and an error names the field.

pub mod budget;
pub mod cluster;
pub mod disruption;
pub mod hash;
pub mod overlay;
pub mod pod;
pub mod volumes;
pub mod workload;

pub use hash::{nodeclass_hash, nodepool_hash};

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time};
use kerf_catalog::{Resources, quantity};

/// A conversion error: the field (a path inside the object) and what is wrong with it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{field}: {message}")]
pub struct FieldError {
    pub field: String,
    pub message: String,
}

impl FieldError {
    pub fn new(field: impl Into<String>, message: impl Into<String>) -> Self {
        FieldError {
            field: field.into(),
            message: message.into(),
        }
    }
}

/// Parses a `{name: Quantity}` map. Negative amounts are rejected, as the API server rejects
/// them in requests, limits, capacity and NodePool limits.
pub fn resources(
    field: &str,
    m: Option<&BTreeMap<String, Quantity>>,
) -> Result<Resources, FieldError> {
    let mut r = Resources::new();
    for (k, v) in m.into_iter().flatten() {
        let q = quantity::parse(&v.0).map_err(|_| {
            FieldError::new(
                format!("{field}.{k}"),
                format!("invalid quantity {:?}", v.0),
            )
        })?;
        if q < 0 {
            return Err(FieldError::new(
                format!("{field}.{k}"),
                format!("{:?}: must be greater than or equal to 0", v.0),
            ));
        }
        r.set(k, q);
    }
    Ok(r)
}

/// An RFC3339 timestamp as Unix seconds.
pub fn timestamp(t: &Time) -> i64 {
    t.0.as_second()
}

/// Labels of an object's metadata.
pub fn labels(meta: &ObjectMeta) -> BTreeMap<String, String> {
    meta.labels.clone().unwrap_or_default()
}
