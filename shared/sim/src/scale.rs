//! The `scale` subresource of Deployments and ReplicaSets (`kubectl scale`): an
//! `autoscaling/v1` Scale read from the object, and `spec.replicas` written back through a
//! merge patch of the object itself.

use axum::http::Method;
use serde_json::{Value, json};

use crate::error::ApiError;
use crate::managed::Writer;
use crate::patch::PatchKind;
use crate::registry::ResourceInfo;
use crate::store::Store;
use crate::{read, write};

/// Whether `info` has a scale subresource here.
pub fn scalable(info: &ResourceInfo) -> bool {
    info.group == "apps" && matches!(info.plural.as_str(), "deployments" | "replicasets")
}

fn scale_of(obj: &Value) -> Value {
    let m = &obj["metadata"];
    let selector = obj["spec"]["selector"]["matchLabels"]
        .as_object()
        .map(|l| {
            l.iter()
                .map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or_default()))
                .collect::<Vec<_>>()
                .join(",")
        })
        .unwrap_or_default();
    json!({"kind": "Scale", "apiVersion": "autoscaling/v1",
        "metadata": {"name": m["name"], "namespace": m["namespace"], "uid": m["uid"],
            "resourceVersion": m["resourceVersion"], "creationTimestamp": m["creationTimestamp"]},
        "spec": {"replicas": obj["spec"]["replicas"].as_i64().unwrap_or(1)},
        "status": {"replicas": obj["status"]["replicas"].as_i64().unwrap_or(0), "selector": selector}})
}

/// GET, PUT or PATCH (merge or strategic: `{"spec": {"replicas": N}}`) of the Scale.
pub fn scale(
    st: &mut Store,
    info: &ResourceInfo,
    (ns, name): (&str, &str),
    method: &Method,
    ct: &str,
    body: Value,
    who: &Writer,
) -> Result<Value, ApiError> {
    if *method == Method::GET {
        return Ok(scale_of(read::get(st, info, ns, name)?.as_ref()));
    }
    if *method == Method::PATCH {
        match PatchKind::from_content_type(ct)? {
            PatchKind::Merge | PatchKind::Strategic => {}
            _ => return Err(ApiError::unsupported_media(ct)),
        }
    } else if *method != Method::PUT {
        return Err(ApiError::method_not_allowed());
    }
    let replicas = body["spec"]["replicas"]
        .as_i64()
        .filter(|r| *r >= 0)
        .ok_or_else(|| {
            ApiError::bad_request("spec.replicas: a non-negative integer is required")
        })?;
    let patch = json!({"spec": {"replicas": replicas}});
    let (_, v) = write::patch(st, info, ns, name, PatchKind::Merge, patch, false, who)?;
    Ok(scale_of(&v))
}
