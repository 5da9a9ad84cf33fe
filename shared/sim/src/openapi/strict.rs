//! Strict field validation of the built-in kinds (`fieldValidation=Strict`): the fields of a
//! written object that kube-apiserver's schema of its kind does not declare, found by walking
//! the object beside the schema and following its references, named as kube-apiserver's
//! strict decoding names them (`spec.template.spec.containers[0].bogus`).

use serde_json::Value;

use super::builtin::{self, Builtin, DataError};
use crate::registry::ResourceInfo;

/// The undeclared fields of `obj`, an object of a built-in kind or a patch of one; none for a
/// kind without a schema. A strategic merge patch's directives (`$patch`,
/// `$setElementOrder/containers`, ...) are not fields.
pub fn unknown_fields(r: &ResourceInfo, obj: &Value) -> Result<Vec<String>, DataError> {
    let b = builtin::data()?;
    let mut out = Vec::new();
    if let Some(schema) = b.kind_schema(r) {
        walk(b, schema, obj, "", &mut out);
    }
    Ok(out)
}

fn walk(b: &Builtin, schema: &Value, v: &Value, path: &str, out: &mut Vec<String>) {
    let s = b.resolve(schema);
    match v {
        Value::Object(map) => {
            let props = s["properties"].as_object();
            let additional = s.get("additionalProperties").filter(|a| a.is_object());
            // An object without declared fields is free-form (FieldsV1, RawExtension).
            if props.is_none() && additional.is_none() {
                return;
            }
            for (k, child) in map.iter().filter(|(k, _)| !k.starts_with('$')) {
                let key = if path.is_empty() {
                    k.clone()
                } else {
                    format!("{path}.{k}")
                };
                match props.and_then(|p| p.get(k)).or(additional) {
                    Some(field) => walk(b, field, child, &key, out),
                    None => out.push(key),
                }
            }
        }
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                walk(b, &s["items"], item, &format!("{path}[{i}]"), out);
            }
        }
        _ => {}
    }
}
