//! How the apiserver applies `x-kubernetes-validations`: every rule of a schema node runs with
//! `self` bound to the (non-null) value there, then the walk descends into properties,
//! `additionalProperties` and `items`. A rule that is false reports its `message` (or
//! `failed rule: <rule>`); one that errors reports `<error> evaluating rule: <message>`;
//! both as a `FieldValueInvalid` cause `Invalid value: "<schema type>": …` at the node's path.
//!
//! Transition rules (those reading `oldSelf`) run only where an old value correlates: on
//! updates, through object properties and map values (unless `x-kubernetes-map-type:
//! atomic`) and through the items of `x-kubernetes-list-type: map` lists, matched by their
//! `x-kubernetes-list-map-keys`. Items of other lists have no old value, so transition rules
//! inside them are skipped, as in Kubernetes.

use super::{CelError, program};
use crate::Cause;
use serde_json::Value;

/// Evaluates the rules of `schema` and of its descendants over `v` (`old` on updates).
pub fn check(schema: &Value, v: &Value, old: Option<&Value>, path: &str, out: &mut Vec<Cause>) {
    if v.is_null() {
        return;
    }
    for rule in schema["x-kubernetes-validations"]
        .as_array()
        .into_iter()
        .flatten()
    {
        if let Some(msg) = verdict(rule, v, old) {
            let kind = schema["type"].as_str().unwrap_or_default();
            out.push(Cause {
                reason: "FieldValueInvalid",
                message: format!("Invalid value: \"{kind}\": {msg}"),
                field: path.to_string(),
            });
        }
    }
    match v {
        Value::Object(map) => {
            let atomic = schema["x-kubernetes-map-type"] == "atomic";
            for (k, val) in map {
                let Some(sub) = child_schema(schema, k) else {
                    continue;
                };
                let old_child = old.filter(|_| !atomic).and_then(|o| o.get(k));
                let p = if schema["properties"].get(k).is_some() {
                    child(path, k)
                } else {
                    format!("{path}[{k}]")
                };
                check(sub, val, old_child, &p, out);
            }
        }
        Value::Array(items) if schema["items"].is_object() => {
            for (i, item) in items.iter().enumerate() {
                let old_item = old.and_then(|o| correlate(schema, o, item));
                check(
                    &schema["items"],
                    item,
                    old_item,
                    &format!("{path}[{i}]"),
                    out,
                );
            }
        }
        _ => {}
    }
}

/// The schema of a property, or of a map value.
fn child_schema<'s>(schema: &'s Value, key: &str) -> Option<&'s Value> {
    schema["properties"]
        .get(key)
        .or_else(|| Some(&schema["additionalProperties"]).filter(|s| s.is_object()))
}

fn child(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

/// The old item with the same map keys, for `x-kubernetes-list-type: map` lists.
fn correlate<'o>(schema: &Value, old: &'o Value, item: &Value) -> Option<&'o Value> {
    if schema["x-kubernetes-list-type"] != "map" {
        return None;
    }
    let keys: Vec<&str> = schema["x-kubernetes-list-map-keys"]
        .as_array()?
        .iter()
        .filter_map(Value::as_str)
        .collect();
    old.as_array()?
        .iter()
        .find(|o| keys.iter().all(|k| o.get(*k) == item.get(*k)))
}

/// `None` if the rule holds (or does not apply), else the cause's detail.
fn verdict(rule: &Value, v: &Value, old: Option<&Value>) -> Option<String> {
    let text = rule["rule"].as_str().unwrap_or_default();
    if text.trim().is_empty() {
        return None;
    }
    let message = rule["message"].as_str().map(str::trim).unwrap_or_default();
    let what = if message.is_empty() {
        text.trim()
    } else {
        message
    };
    let p = match program(text) {
        Ok(p) => p,
        Err(e) => return Some(format!("rule compile error: {e}")),
    };
    if p.is_transition() && old.is_none() {
        return None;
    }
    match p.eval(v, old) {
        Ok(true) => None,
        Ok(false) if message.is_empty() => Some(format!("failed rule: {what}")),
        Ok(false) => Some(message.to_string()),
        Err(CelError::NoSuchOverload) => Some(format!(
            "'no such overload': call arguments did not match a supported operator, \
             function or macro signature for rule: {what}"
        )),
        Err(e) => Some(format!("{e} evaluating rule: {what}")),
    }
}
