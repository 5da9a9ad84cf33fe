//! Patch bodies: JSON merge (RFC 7386), JSON patch (RFC 6902 with the apiserver's
//! "missing equals null" `test`), strategic merge for the lists Kerf touches, and the
//! checks of patch options and applied configurations (apply itself is [`crate::apply`]).

use crate::error::{ApiError, Cause};
use serde_json::{Map, Value};

/// The patch flavour, from the request's content type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PatchKind {
    /// `application/merge-patch+json`.
    Merge,
    /// `application/json-patch+json`.
    Json,
    /// `application/strategic-merge-patch+json`.
    Strategic,
    /// `application/apply-patch+yaml` (server-side apply with field ownership).
    Apply,
}

impl PatchKind {
    /// Maps a content type; unknown types give 415.
    pub fn from_content_type(ct: &str) -> Result<Self, ApiError> {
        let base = ct.split(';').next().unwrap_or_default().trim();
        match base {
            "application/merge-patch+json" => Ok(Self::Merge),
            "application/json-patch+json" => Ok(Self::Json),
            "application/strategic-merge-patch+json" => Ok(Self::Strategic),
            "application/apply-patch+yaml" | "application/apply-patch+json" => Ok(Self::Apply),
            _ => Err(ApiError::unsupported_media(ct)),
        }
    }
}

/// 422 for an apply without `fieldManager`, or `force` on any other patch type.
pub fn check_options(
    kind: PatchKind,
    field_manager: Option<&str>,
    force: bool,
) -> Result<(), ApiError> {
    let cause = match kind {
        PatchKind::Apply if field_manager.is_none_or(str::is_empty) => Cause {
            reason: "FieldValueRequired",
            message: "Required value: is required for apply patch".into(),
            field: "fieldManager".into(),
        },
        PatchKind::Apply => return Ok(()),
        _ if force => Cause {
            reason: "FieldValueForbidden",
            message: "Forbidden: may not be specified for non-apply patch".into(),
            field: "force".into(),
        },
        _ => return Ok(()),
    };
    Err(ApiError::invalid(
        "PatchOptions",
        "meta.k8s.io",
        "",
        &[cause],
    ))
}

/// 400 for an applied configuration of another apiVersion, or one that sets managedFields.
pub fn check_apply_body(api_version: &str, body: &Value) -> Result<(), ApiError> {
    let version = body["apiVersion"].as_str().unwrap_or_default();
    if version != api_version {
        return Err(ApiError::bad_request(format!(
            "Incorrect version specified in apply patch. Specified patch version: {version}, expected: {api_version}"
        )));
    }
    if !body["metadata"]["managedFields"].is_null() {
        return Err(ApiError::bad_request("metadata.managedFields must be nil"));
    }
    Ok(())
}

/// Applies a JSON patch document, treating a `test` of `null` on a missing path as passing.
pub fn json_patch(doc: &mut Value, body: &Value) -> Result<(), ApiError> {
    let ops = body
        .as_array()
        .ok_or_else(|| ApiError::bad_request("json patch must be an array"))?;
    let kept: Vec<Value> = ops
        .iter()
        .filter(|op| {
            let null_test = op["op"] == "test" && op["value"].is_null();
            let path = op["path"].as_str().unwrap_or_default();
            !(null_test && doc.pointer(path).is_none_or(Value::is_null))
        })
        .cloned()
        .collect();
    let patch: json_patch::Patch = serde_json::from_value(Value::Array(kept))
        .map_err(|e| ApiError::bad_request(format!("invalid json patch: {e}")))?;
    json_patch::patch(doc, &patch).map_err(|_| ApiError::patch_rejected())
}

/// RFC 7386 merge.
pub fn merge(doc: &mut Value, body: &Value) {
    json_patch::merge(doc, body);
}

/// The merge key of a list field under strategic merge, `Some("")` for primitive unions.
fn merge_key(field: &str) -> Option<&'static str> {
    match field {
        "finalizers" => Some(""),
        "conditions" | "addresses" => Some("type"),
        "containers" | "initContainers" | "ephemeralContainers" | "env" | "volumes" => Some("name"),
        "imagePullSecrets" => Some("name"),
        "volumeMounts" => Some("mountPath"),
        "ports" => Some("containerPort"),
        "ownerReferences" => Some("uid"),
        _ => None,
    }
}

/// Strategic merge for built-in types: merge-keyed lists, primitive unions, `$patch`.
pub fn strategic(doc: &mut Value, body: &Value) {
    let Some(patch) = body.as_object() else {
        *doc = body.clone();
        return;
    };
    if patch.get("$patch").and_then(Value::as_str) == Some("replace") {
        let mut p = patch.clone();
        p.remove("$patch");
        *doc = Value::Object(p);
        return;
    }
    if !doc.is_object() {
        *doc = Value::Object(Map::new());
    }
    let Some(target) = doc.as_object_mut() else {
        return;
    };
    for (k, pv) in patch {
        strategic_field(target, k, pv);
    }
}

fn strategic_field(target: &mut Map<String, Value>, k: &str, pv: &Value) {
    if let Some(field) = k.strip_prefix("$deleteFromPrimitiveList/") {
        if let Some(Value::Array(items)) = target.get_mut(field) {
            items.retain(|x| !pv.as_array().is_some_and(|d| d.contains(x)));
        }
        return;
    }
    if k.starts_with('$') {
        return;
    }
    match (pv, target.get_mut(k), merge_key(k)) {
        (Value::Null, _, _) => {
            target.remove(k);
        }
        (Value::Object(_), Some(t @ Value::Object(_)), _) => strategic(t, pv),
        (Value::Array(items), Some(Value::Array(cur)), Some(mk)) => merge_list(cur, items, mk),
        _ => {
            let mut clean = pv.clone();
            strip_directives(&mut clean);
            target.insert(k.to_string(), clean);
        }
    }
}

fn strip_directives(v: &mut Value) {
    match v {
        Value::Object(m) => {
            m.retain(|k, _| !k.starts_with('$'));
            m.values_mut().for_each(strip_directives);
        }
        Value::Array(a) => a.iter_mut().for_each(strip_directives),
        _ => {}
    }
}

fn merge_list(cur: &mut Vec<Value>, items: &[Value], mk: &str) {
    for item in items {
        if mk.is_empty() {
            if !cur.contains(item) {
                cur.push(item.clone());
            }
            continue;
        }
        let id = &item[mk];
        let pos = cur.iter().position(|c| &c[mk] == id);
        let delete = item["$patch"] == "delete";
        match (pos, delete) {
            (Some(i), true) => {
                cur.remove(i);
            }
            (Some(i), false) => strategic(&mut cur[i], item),
            (None, false) => {
                let mut clean = item.clone();
                strip_directives(&mut clean);
                cur.push(clean);
            }
            (None, true) => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn strategic_lists() {
        let mut d = json!({"metadata": {"finalizers": ["a"]}, "status": {"conditions": [
            {"type": "Ready", "status": "False"}, {"type": "X", "status": "True"}]}});
        strategic(
            &mut d,
            &json!({"metadata": {"finalizers": ["b"]}, "status": {"conditions": [
            {"type": "Ready", "status": "True"}, {"type": "X", "$patch": "delete"}]}}),
        );
        assert_eq!(d["metadata"]["finalizers"], json!(["a", "b"]));
        assert_eq!(
            d["status"]["conditions"],
            json!([{"type": "Ready", "status": "True"}])
        );
    }

    #[test]
    fn patch_options_and_apply_bodies() {
        let e = check_options(PatchKind::Apply, None, false).unwrap_err();
        assert_eq!(
            e.body["message"],
            "PatchOptions.meta.k8s.io \"\" is invalid: fieldManager: Required value: is required for apply patch"
        );
        assert_eq!(
            check_options(PatchKind::Merge, Some("m"), true)
                .unwrap_err()
                .code,
            422
        );
        assert!(check_options(PatchKind::Apply, Some("m"), true).is_ok());
        assert_eq!(
            check_apply_body("v1", &json!({"kind": "Node"}))
                .unwrap_err()
                .code,
            400
        );
        let managed = json!({"apiVersion": "v1", "metadata": {"managedFields": []}});
        assert_eq!(check_apply_body("v1", &managed).unwrap_err().code, 400);
        assert!(check_apply_body("v1", &json!({"apiVersion": "v1"})).is_ok());
    }

    #[test]
    fn json_patch_null_test_on_missing_path() {
        let mut d = json!({"metadata": {}});
        let p = json!([{"op": "test", "path": "/metadata/finalizers", "value": null},
                        {"op": "add", "path": "/metadata/finalizers", "value": ["x"]}]);
        json_patch(&mut d, &p).unwrap();
        assert_eq!(d["metadata"]["finalizers"], json!(["x"]));
        let bad = json!([{"op": "test", "path": "/metadata/finalizers", "value": ["y"]}]);
        assert_eq!(json_patch(&mut d, &bad).unwrap_err().code, 422);
    }
}
