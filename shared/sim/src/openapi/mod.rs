//! The OpenAPI documents kubectl reads: `/openapi/v2` (JSON, or protobuf as kubectl asks;
//! client-side validation of `kubectl apply` and `kubectl explain` before 1.27) and
//! `/openapi/v3` (a root listing one document per group-version; server-side field
//! validation and `kubectl explain` since 1.27). They describe the custom resources, whose
//! schemas the server holds, as kube-apiserver publishes them: one definition per kind named
//! `sh.karpenter.v1.NodePool`, tagged `x-kubernetes-group-version-kind`, with `metadata`
//! pointing at ObjectMeta. Built-in kinds carry no schema here, so kubectl skips validating
//! them and `kubectl explain` does not know them.

mod meta;
pub mod proto;
mod v2;

use serde_json::{Map, Value, json};

use crate::registry::{Registry, ResourceInfo};

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

fn gvk(r: &ResourceInfo) -> Value {
    json!({"group": r.group, "version": r.version, "kind": r.kind})
}

/// `/openapi/v3`: one entry per group-version that has custom resources.
pub fn v3_root(reg: &Registry) -> Value {
    let mut paths = Map::new();
    for (r, _) in described(reg) {
        let gv = format!("apis/{}/{}", r.group, r.version);
        let url = format!("/openapi/v3/{gv}?hash={:016X}", hash(&gv));
        paths.insert(gv, json!({"serverRelativeURL": url}));
    }
    json!({"paths": paths})
}

/// A stable tag for the document's URL (kubectl caches by it).
fn hash(s: &str) -> u64 {
    s.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// `/openapi/v3/apis/{group}/{version}`, `None` for a group-version without custom resources.
pub fn v3(reg: &Registry, gv: &str) -> Option<Value> {
    let mut schemas = Map::new();
    let mut paths = Map::new();
    for (r, schema) in
        described(reg).filter(|(r, _)| format!("apis/{}/{}", r.group, r.version) == gv)
    {
        let mut s = schema.clone();
        s["properties"]["metadata"] = json!({
            "description": meta::DESCRIPTION,
            "allOf": [{"$ref": format!("#/components/schemas/{}", meta::NAME)}]});
        s["x-kubernetes-group-version-kind"] = json!([gvk(r)]);
        schemas.insert(definition_name(r), s);
        for (path, op) in operations(r) {
            paths.insert(path, op);
        }
    }
    if schemas.is_empty() {
        return None;
    }
    schemas.insert(meta::NAME.into(), meta::schema());
    Some(json!({
        "openapi": "3.0.0",
        "info": {"title": "Kubernetes", "version": "v1.33.0"},
        "paths": paths,
        "components": {"schemas": schemas},
    }))
}

/// The object paths of a custom resource, with the PATCH operation and the query parameters
/// kubectl looks for (`fieldValidation` tells it the server validates fields itself).
fn operations(r: &ResourceInfo) -> Vec<(String, Value)> {
    let base = if r.namespaced {
        format!(
            "/apis/{}/{}/namespaces/{{namespace}}/{}",
            r.group, r.version, r.plural
        )
    } else {
        format!("/apis/{}/{}/{}", r.group, r.version, r.plural)
    };
    let params: Vec<Value> = ["dryRun", "fieldManager", "fieldValidation", "force"]
        .iter()
        .map(|n| json!({"name": n, "in": "query", "schema": {"type": "string", "uniqueItems": true}}))
        .collect();
    let op = |action: &str| {
        json!({"operationId": format!("{action}{}", r.kind), "parameters": params,
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

#[cfg(test)]
mod tests;
