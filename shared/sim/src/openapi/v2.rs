//! `/openapi/v2`: a Swagger 2.0 document with the built-in kinds' definitions as
//! kube-apiserver publishes them, a definition per custom kind converted from its structural
//! v3 schema as kube-apiserver converts it (no `nullable`, no `anyOf`, no int-or-string type,
//! no extensions kubectl would misread), and the object paths.

use serde_json::{Map, Value, json};

use super::{DataError, builtin, definition_name, described, gvk, operations, with_schema};
use crate::registry::Registry;

/// The document.
pub fn v2(reg: &Registry) -> Result<Value, DataError> {
    let b = builtin::data()?;
    let mut definitions = b.v2_definitions().clone();
    for (r, schema) in described(reg) {
        let mut s = convert(schema);
        s["properties"]["metadata"] = json!({"description": builtin::METADATA_DESCRIPTION,
            "$ref": format!("#/definitions/{}", builtin::OBJECT_META)});
        s["x-kubernetes-group-version-kind"] = json!([gvk(r)]);
        definitions.insert(definition_name(r), s);
    }
    let mut paths = Map::new();
    for (path, mut item) in with_schema(reg, b).flat_map(operations) {
        if let Some(ops) = item.as_object_mut() {
            for op in ops.values_mut() {
                op["parameters"] = v2_parameters(&op["parameters"]);
            }
        }
        paths.insert(path, item);
    }
    Ok(json!({
        "swagger": "2.0",
        "info": {"title": "Kubernetes", "version": b.version},
        "paths": paths,
        "definitions": definitions,
    }))
}

/// v3 parameters (`schema: {type}`) as v2 writes them (`type` beside `name`).
fn v2_parameters(v3: &Value) -> Value {
    let list = v3.as_array().map(Vec::as_slice).unwrap_or_default();
    Value::Array(
        list.iter()
            .map(|p| {
                json!({"name": p["name"], "in": p["in"], "type": p["schema"]["type"],
                "uniqueItems": true})
            })
            .collect(),
    )
}

const KEPT: &[&str] = &[
    "type",
    "format",
    "description",
    "default",
    "enum",
    "required",
    "pattern",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "minLength",
    "maxLength",
    "minItems",
    "maxItems",
    "uniqueItems",
    "minProperties",
    "maxProperties",
];

/// One structural v3 schema as a v2 schema.
pub fn convert(s: &Value) -> Value {
    let Some(obj) = s.as_object() else {
        return json!({});
    };
    let mut out = Map::new();
    for k in KEPT {
        if let Some(v) = obj.get(*k) {
            out.insert((*k).to_string(), v.clone());
        }
    }
    let flag = |k: &str| obj.get(k).and_then(Value::as_bool) == Some(true);
    // v2 has no null and no union type: kubectl would refuse a null or a number here.
    if flag("nullable") || flag("x-kubernetes-int-or-string") {
        out.remove("type");
        return Value::Object(out);
    }
    if let Some(items) = obj.get("items") {
        out.insert("items".into(), convert(items));
    }
    if let Some(Value::Object(_)) = obj.get("additionalProperties") {
        out.insert(
            "additionalProperties".into(),
            convert(&obj["additionalProperties"]),
        );
    }
    if let (Some(Value::Object(props)), false) = (
        obj.get("properties"),
        flag("x-kubernetes-preserve-unknown-fields"),
    ) {
        let props: Map<String, Value> =
            props.iter().map(|(k, v)| (k.clone(), convert(v))).collect();
        out.insert("properties".into(), Value::Object(props));
    }
    Value::Object(out)
}
