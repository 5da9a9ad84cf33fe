//! The few `x-kubernetes-validations` (CEL) rules of Karpenter's CRDs that the sim
//! evaluates, recognised by their exact text (this is not a CEL engine):
//!
//! * `self == oldSelf` (immutability, e.g. NodeClaim `.spec`), `self.F == oldSelf.F`,
//!   `has(self.F) == has(oldSelf.F)` — on updates only;
//! * `self != ''`, `self.size() != 0`;
//! * `has(self.A) || has(self.B)` and `!(has(self.A) && has(self.B))`;
//! * `self.all(x, x.operator == 'In' ? x.values.size() != 0 : true)`;
//! * the label restrictions of [`crate::cel_labels`].
//!
//! Any other rule is skipped (treated as passing).

use crate::error::Cause;
use regex::Regex;
use serde_json::Value;
use std::sync::LazyLock;

static FIELD_EQ_OLD: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r"^self\.(\w+) == oldSelf\.(\w+)$").ok());
static HAS_EQ_OLD: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r"^has\(self\.(\w+)\) == has\(oldSelf\.(\w+)\)$").ok());
static HAS_OR: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r"^has\(self\.(\w+)\) \|\| has\(self\.(\w+)\)$").ok());
static NOT_BOTH: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r"^!\(has\(self\.(\w+)\) && has\(self\.(\w+)\)\)$").ok());

fn captures<'a>(re: &LazyLock<Option<Regex>>, rule: &'a str) -> Option<(&'a str, &'a str)> {
    let c = re.as_ref()?.captures(rule)?;
    Some((c.get(1)?.as_str(), c.get(2)?.as_str()))
}

fn has(v: &Value, f: &str) -> bool {
    v.get(f).is_some_and(|x| !x.is_null())
}

fn size(v: &Value) -> usize {
    match v {
        Value::Array(a) => a.len(),
        Value::Object(o) => o.len(),
        Value::String(s) => s.chars().count(),
        _ => 0,
    }
}

fn in_has_values(v: &Value) -> bool {
    v.as_array()
        .into_iter()
        .flatten()
        .all(|x| x["operator"] != "In" || size(&x["values"]) != 0)
}

/// `Some(passed)` for a recognised rule, `None` for one the sim does not evaluate.
pub fn eval(rule: &str, v: &Value, old: Option<&Value>) -> Option<bool> {
    match rule {
        "self == oldSelf" => return Some(old.is_none_or(|o| o == v)),
        "self != ''" => return Some(v != ""),
        "self.size() != 0" => return Some(size(v) != 0),
        "self.all(x, x.operator == 'In' ? x.values.size() != 0 : true)" => {
            return Some(in_has_values(v));
        }
        _ => {}
    }
    if let Some((a, b)) = captures(&FIELD_EQ_OLD, rule) {
        return Some(old.is_none_or(|o| v.get(a) == o.get(b)));
    }
    if let Some((a, b)) = captures(&HAS_EQ_OLD, rule) {
        return Some(old.is_none_or(|o| has(v, a) == has(o, b)));
    }
    if let Some((a, b)) = captures(&HAS_OR, rule) {
        return Some(has(v, a) || has(v, b));
    }
    captures(&NOT_BOTH, rule)
        .map(|(a, b)| !(has(v, a) && has(v, b)))
        .or_else(|| crate::cel_labels::eval(rule, v))
}

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
        Value::Number(_) => "number",
        Value::Bool(_) => "boolean",
        Value::Null => "null",
    }
}

fn child(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

/// Evaluates the supported rules over the whole object (`old` on updates).
pub fn check(schema: &Value, v: &Value, old: Option<&Value>, path: &str, out: &mut Vec<Cause>) {
    for r in schema["x-kubernetes-validations"]
        .as_array()
        .into_iter()
        .flatten()
    {
        let rule = r["rule"].as_str().unwrap_or_default();
        if eval(rule, v, old) == Some(false) {
            let msg = r["message"]
                .as_str()
                .map_or_else(|| format!("failed rule: {rule}"), str::to_string);
            let message = format!("Invalid value: \"{}\": {msg}", type_name(v));
            out.push(Cause {
                reason: "FieldValueInvalid",
                message,
                field: path.to_string(),
            });
        }
    }
    match v {
        Value::Object(map) => {
            let props = schema["properties"].as_object();
            for (k, val) in map {
                let sub = props.and_then(|p| p.get(k)).or_else(|| {
                    schema["additionalProperties"]
                        .as_object()
                        .map(|_| &schema["additionalProperties"])
                });
                if let Some(s) = sub {
                    let old_child = old.and_then(|o| o.get(k));
                    check(s, val, old_child, &child(path, k), out);
                }
            }
        }
        Value::Array(items) if schema["items"].is_object() => {
            for (i, item) in items.iter().enumerate() {
                check(&schema["items"], item, None, &format!("{path}[{i}]"), out);
            }
        }
        _ => {}
    }
}
