//! Helpers shared by the integration tests: fixture loading and a lossless-ness check.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers outside #[test] fns
#![allow(dead_code)]

use std::path::PathBuf;

use serde::Deserialize;
use serde_json::Value;

pub fn fixture(path: &str) -> String {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(path);
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

pub fn documents(text: &str) -> Vec<Value> {
    serde_yaml::Deserializer::from_str(text)
        .map(|d| serde_yaml::Value::deserialize(d).unwrap())
        .filter(|v| !v.is_null())
        .map(|v| serde_json::to_value(v).unwrap())
        .collect()
}

fn is_empty(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::Array(a) => a.is_empty(),
        Value::Object(o) => o.is_empty(),
        _ => false,
    }
}

/// Every non-empty leaf of `input` is in `output` (numbers may come back as strings, as
/// quantities do). Returns the paths that were lost or changed.
pub fn lost(input: &Value, output: &Value, path: &str) -> Vec<String> {
    match (input, output) {
        (Value::Object(i), Value::Object(o)) => i
            .iter()
            .filter(|(_, v)| !is_empty(v))
            .flat_map(|(k, v)| match o.get(k) {
                Some(ov) => lost(v, ov, &format!("{path}.{k}")),
                None => vec![format!("{path}.{k} missing")],
            })
            .collect(),
        (Value::Array(i), Value::Array(o)) if i.len() == o.len() => i
            .iter()
            .zip(o)
            .enumerate()
            .flat_map(|(n, (a, b))| lost(a, b, &format!("{path}[{n}]")))
            .collect(),
        (Value::Number(n), Value::String(s)) if n.to_string() == *s => vec![],
        (a, b) if a == b => vec![],
        (a, b) => vec![format!("{path}: {a} became {b}")],
    }
}
