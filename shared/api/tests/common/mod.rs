//! Helpers shared by the integration tests: fixture loading, a lossless-ness check, and the
//! v1 round trip with Karpenter's defaults.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers outside #[test] fns
#![allow(dead_code)]

use std::path::PathBuf;

use kerf_api::v1::{EC2NodeClass, NodeClaim, NodePool};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

pub fn fixture(path: &str) -> String {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(path);
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// Every `*.yaml` file of `tests/fixtures/<dir>`, sorted by name, as (name, text).
pub fn fixture_files(dir: &str) -> Vec<(String, String)> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(dir);
    let mut names: Vec<String> = std::fs::read_dir(&path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .map(|entry| entry.unwrap().file_name().into_string().unwrap())
        .filter(|name| name.ends_with(".yaml"))
        .collect();
    names.sort();
    names
        .into_iter()
        .map(|name| {
            let text = fixture(&format!("{dir}/{name}"));
            (name, text)
        })
        .collect()
}

pub fn documents(text: &str) -> Vec<Value> {
    yaml_serde::Deserializer::from_str(text)
        .map(|d| yaml_serde::Value::deserialize(d).unwrap())
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

/// Parses `doc` as `T`, checks that no field was lost and that a second trip changes nothing;
/// returns the re-serialized document.
pub fn roundtrip<T: DeserializeOwned + Serialize + PartialEq + std::fmt::Debug>(
    doc: &Value,
) -> Value {
    let parsed: T = serde_json::from_value(doc.clone()).unwrap();
    let out = serde_json::to_value(&parsed).unwrap();
    let missing = lost(doc, &out, "");
    assert!(missing.is_empty(), "lost in round trip: {missing:#?}");
    let again: T = serde_json::from_value(out.clone()).unwrap();
    assert_eq!(again, parsed, "second round trip differs");
    assert_eq!(serde_json::to_value(&again).unwrap(), out);
    out
}

/// Karpenter's v1 defaults: (kind, JSON pointer, value when the input leaves it unset).
fn v1_defaults() -> [(&'static str, &'static str, Value); 9] {
    [
        (
            "NodePool",
            "/spec/disruption/consolidationPolicy",
            json!("WhenEmptyOrUnderutilized"),
        ),
        ("NodePool", "/spec/disruption/consolidateAfter", json!("0s")),
        (
            "NodePool",
            "/spec/disruption/budgets",
            json!([{"nodes": "10%"}]),
        ),
        ("NodePool", "/spec/template/spec/expireAfter", json!("720h")),
        ("NodeClaim", "/spec/expireAfter", json!("720h")),
        (
            "EC2NodeClass",
            "/spec/metadataOptions/httpEndpoint",
            json!("enabled"),
        ),
        (
            "EC2NodeClass",
            "/spec/metadataOptions/httpProtocolIPv6",
            json!("disabled"),
        ),
        (
            "EC2NodeClass",
            "/spec/metadataOptions/httpPutResponseHopLimit",
            json!(1),
        ),
        (
            "EC2NodeClass",
            "/spec/metadataOptions/httpTokens",
            json!("required"),
        ),
    ]
}

/// Round-trips a v1 NodePool, NodeClaim or EC2NodeClass and checks that every default the
/// input leaves unset was applied; returns the re-serialized document.
pub fn check_v1(doc: &Value) -> Value {
    let kind = doc["kind"].as_str().unwrap();
    let out = match kind {
        "NodePool" => roundtrip::<NodePool>(doc),
        "NodeClaim" => roundtrip::<NodeClaim>(doc),
        "EC2NodeClass" => roundtrip::<EC2NodeClass>(doc),
        other => panic!("unexpected kind {other}"),
    };
    for (_, pointer, default) in v1_defaults().into_iter().filter(|(k, ..)| *k == kind) {
        let expected = doc.pointer(pointer).cloned().unwrap_or(default);
        assert_eq!(
            out.pointer(pointer),
            Some(&expected),
            "{kind}/{}: {pointer}",
            doc["metadata"]["name"]
        );
    }
    out
}
