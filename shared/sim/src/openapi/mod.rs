//! The OpenAPI documents kubectl reads: `/openapi/v2` (JSON, or protobuf as kubectl asks;
//! client-side validation of `kubectl apply` and `kubectl explain` before 1.27) and
//! `/openapi/v3` (a root listing one document per group-version; server-side field
//! validation and `kubectl explain` since 1.27). They describe every kind the server serves
//! as kube-apiserver publishes it: the built-in kinds (`io.k8s.api.core.v1.Pod`, ...) with
//! kube-apiserver's own schemas ([`builtin`]), and the custom resources with the schemas the
//! server holds, one definition per kind named `sh.karpenter.v1.NodePool`. Each kind's
//! definition is tagged `x-kubernetes-group-version-kind` (what kubectl looks kinds up by),
//! and each resource has its object paths, whose PATCH operation tells kubectl that the
//! server validates fields itself (it does: [`unknown_fields`] for the built-in kinds, the
//! schema the server holds for the custom resources).

mod builtin;
pub mod proto;
mod strict;
mod v2;

use serde_json::{Map, Value, json};

use crate::registry::{Registry, ResourceInfo};
use builtin::{Builtin, group_version};

pub use builtin::DataError;
pub use strict::unknown_fields;
pub use v2::v2;

/// kube-apiserver's definition name of a custom kind: the group reversed, then version and
/// kind (`karpenter.k8s.aws`, `v1`, `EC2NodeClass` → `aws.k8s.karpenter.v1.EC2NodeClass`).
pub fn definition_name(r: &ResourceInfo) -> String {
    let mut parts: Vec<&str> = r.group.split('.').collect();
    parts.reverse();
    format!("{}.{}.{}", parts.join("."), r.version, r.kind)
}

/// The custom resources with a schema, one per kind and version.
fn described(reg: &Registry) -> impl Iterator<Item = (&ResourceInfo, &Value)> {
    reg.all()
        .iter()
        .filter_map(|r| r.schema.as_ref().map(|s| (r, s)))
}

/// Every resource whose kind has a schema, built-in or custom (the ones with paths).
fn with_schema<'a>(reg: &'a Registry, b: &'a Builtin) -> impl Iterator<Item = &'a ResourceInfo> {
    reg.all()
        .iter()
        .filter(|r| r.schema.is_some() || (!r.custom && b.describes(r)))
}

fn gvk(r: &ResourceInfo) -> Value {
    json!({"group": r.group, "version": r.version, "kind": r.kind})
}

/// `/openapi/v3`: one entry per group-version that has a kind with a schema.
pub fn v3_root(reg: &Registry) -> Result<Value, DataError> {
    let b = builtin::data()?;
    let mut paths = Map::new();
    for gv in with_schema(reg, b).map(group_version) {
        let url = format!("/openapi/v3/{gv}?hash={:016X}", hash(&gv));
        paths.insert(gv, json!({"serverRelativeURL": url}));
    }
    Ok(json!({"paths": paths}))
}

/// A stable tag for the document's URL (kubectl caches by it).
fn hash(s: &str) -> u64 {
    s.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// `/openapi/v3/api/v1`, `/openapi/v3/apis/{group}/{version}`: the group-version's kinds,
/// what they reference and their paths; `None` for a group-version without any.
pub fn v3(reg: &Registry, gv: &str) -> Result<Option<Value>, DataError> {
    let b = builtin::data()?;
    let mut schemas = b.v3_schemas(gv).unwrap_or_default();
    for (r, schema) in described(reg).filter(|(r, _)| group_version(r) == gv) {
        schemas.insert(definition_name(r), custom_v3(r, schema));
        schemas.extend(b.v3_object_meta());
    }
    if schemas.is_empty() {
        return Ok(None);
    }
    let paths: Map<String, Value> = with_schema(reg, b)
        .filter(|r| group_version(r) == gv)
        .flat_map(operations)
        .collect();
    Ok(Some(json!({
        "openapi": "3.0.0",
        "info": {"title": "Kubernetes", "version": b.version},
        "paths": paths,
        "components": {"schemas": schemas},
    })))
}

/// A custom kind's schema with kube-apiserver's additions: `metadata` is ObjectMeta, and the
/// kind is tagged.
fn custom_v3(r: &ResourceInfo, schema: &Value) -> Value {
    let mut s = schema.clone();
    s["properties"]["metadata"] = json!({
        "description": builtin::METADATA_DESCRIPTION,
        "allOf": [{"$ref": format!("#/components/schemas/{}", builtin::OBJECT_META)}]});
    s["x-kubernetes-group-version-kind"] = json!([gvk(r)]);
    s
}

/// The object paths of a resource, with the PATCH operation and the query parameters
/// kubectl looks for (`fieldValidation` tells it the server validates fields itself).
fn operations(r: &ResourceInfo) -> Vec<(String, Value)> {
    let root = format!("/{}", group_version(r));
    let base = if r.namespaced {
        format!("{root}/namespaces/{{namespace}}/{}", r.plural)
    } else {
        format!("{root}/{}", r.plural)
    };
    let params: Vec<Value> = ["dryRun", "fieldManager", "fieldValidation", "force"]
        .iter()
        .map(|n| json!({"name": n, "in": "query", "schema": {"type": "string", "uniqueItems": true}}))
        .collect();
    let id = operation_id(r);
    let op = |action: &str| {
        json!({"operationId": format!("{action}{id}"), "parameters": params,
            "x-kubernetes-action": action, "x-kubernetes-group-version-kind": gvk(r),
            "responses": {"200": {"description": "OK"}}})
    };
    vec![
        (base.clone(), json!({"post": op("post")})),
        (
            format!("{base}/{{name}}"),
            json!({"get": op("get"), "put": op("put"), "patch": op("patch"), "delete": op("delete")}),
        ),
    ]
}

/// What follows the verb in kube-apiserver's operation ids, unique per resource:
/// `CoreV1NamespacedPod`, `KarpenterShV1NodePool`.
fn operation_id(r: &ResourceInfo) -> String {
    let group = if r.group.is_empty() { "core" } else { &r.group };
    let mut id: String = group.split('.').map(capitalized).collect();
    id.push_str(&capitalized(&r.version));
    if r.namespaced {
        id.push_str("Namespaced");
    }
    id + &r.kind
}

fn capitalized(s: &str) -> String {
    let mut c = s.chars();
    c.next()
        .map(|f| f.to_uppercase().chain(c).collect())
        .unwrap_or_default()
}

#[cfg(test)]
mod builtin_tests;
#[cfg(test)]
mod tests;
