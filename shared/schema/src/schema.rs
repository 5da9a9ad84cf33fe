//! Structural OpenAPI v3 schemas of CRDs: defaulting, pruning and validation, with the
//! apiserver's field paths, cause reasons and messages. The CEL rules
//! (`x-kubernetes-validations`) are evaluated by [`crate::cel`], unless the object already
//! failed in a way the apiserver treats as blocking (a wrong type, a missing required field,
//! an unsupported enum value, too long or too many).

use crate::Cause;
use regex::Regex;
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::sync::{LazyLock, Mutex};

const ROOT_KEYS: [&str; 3] = ["apiVersion", "kind", "metadata"];

/// Applies `default`s and removes unknown fields, as the apiserver does before validating.
pub fn default_and_prune(schema: &Value, obj: &mut Value) {
    walk_mut(schema, obj, true, None);
}

/// The fields of `obj` that `schema` does not declare (those pruning drops), as
/// `spec.template.foo` paths: what `fieldValidation=Strict` refuses.
pub fn unknown_fields(schema: &Value, obj: &Value) -> Vec<String> {
    let mut pruned = Pruned::default();
    walk_mut(schema, &mut obj.clone(), true, Some(&mut pruned));
    pruned.out
}

/// Where the walk is and what it pruned, when the caller asks (strict field validation).
#[derive(Default)]
struct Pruned {
    path: Vec<String>,
    out: Vec<String>,
}

impl Pruned {
    fn enter(&mut self, segment: String) {
        self.path.push(segment);
    }

    fn leave(&mut self) {
        self.path.pop();
    }

    fn record(&mut self, key: &str) {
        let mut p = String::new();
        for s in self.path.iter().map(String::as_str).chain([key]) {
            if !p.is_empty() && !s.starts_with('[') {
                p.push('.');
            }
            p.push_str(s);
        }
        self.out.push(p);
    }
}

fn preserves_unknown(schema: &Value) -> bool {
    schema["x-kubernetes-preserve-unknown-fields"].as_bool() == Some(true)
}

fn walk_mut(schema: &Value, v: &mut Value, root: bool, mut pruned: Option<&mut Pruned>) {
    match v {
        Value::Object(map) => object_mut(schema, map, root, pruned),
        Value::Array(items) => {
            for (i, item) in items.iter_mut().enumerate() {
                walk_child(
                    &schema["items"],
                    item,
                    || format!("[{i}]"),
                    pruned.as_deref_mut(),
                );
            }
        }
        _ => {}
    }
}

/// Walks a child value, with `segment` on the recorded path while it does (the segment is
/// only built when pruned keys are being recorded).
fn walk_child(
    schema: &Value,
    child: &mut Value,
    segment: impl FnOnce() -> String,
    pruned: Option<&mut Pruned>,
) {
    match pruned {
        Some(p) => {
            p.enter(segment());
            walk_mut(schema, child, false, Some(&mut *p));
            p.leave();
        }
        None => walk_mut(schema, child, false, None),
    }
}

fn object_mut(
    schema: &Value,
    map: &mut Map<String, Value>,
    root: bool,
    mut pruned: Option<&mut Pruned>,
) {
    let props = schema["properties"].as_object();
    if let Some(props) = props {
        for (k, ps) in props {
            let missing = map
                .get(k)
                .is_none_or(|x| x.is_null() && ps["nullable"] != true);
            if missing && let Some(d) = ps.get("default") {
                map.insert(k.clone(), d.clone());
            }
        }
    }
    let additional = &schema["additionalProperties"];
    let keep_unknown = preserves_unknown(schema) || additional == &Value::Bool(true);
    map.retain(|k, _| {
        let kept = (root && ROOT_KEYS.contains(&k.as_str()))
            || keep_unknown
            || additional.is_object()
            || props.is_some_and(|p| p.contains_key(k));
        if let (false, Some(p)) = (kept, pruned.as_deref_mut()) {
            p.record(k);
        }
        kept
    });
    for (k, child) in map.iter_mut() {
        if root && k == "metadata" {
            continue;
        }
        let child_schema = match props.and_then(|p| p.get(k)) {
            Some(ps) => ps,
            None if additional.is_object() => additional,
            None => continue,
        };
        walk_child(child_schema, child, || k.clone(), pruned.as_deref_mut());
    }
}

/// Validates an object (and, on updates, its transition from `old`); returns the causes
/// of a 422.
pub fn validate(schema: &Value, obj: &Value, old: Option<&Value>) -> Vec<Cause> {
    let mut out = Vec::new();
    let mut root = schema.clone();
    if let Some(p) = root["properties"].as_object_mut() {
        p.remove("metadata");
    }
    check(&root, obj, "", &mut out);
    if out.iter().any(|c| BLOCKING.contains(&c.reason)) {
        out.push(Cause {
            reason: "FieldValueInvalid",
            message: format!("Invalid value: \"null\": {CEL_SKIPPED}"),
            field: "<nil>".into(),
        });
    } else {
        crate::cel::check(&root, obj, old, "", &mut out);
    }
    out
}

/// Schema failures after which the apiserver does not run the CEL rules.
const BLOCKING: [&str; 5] = [
    "FieldValueTypeInvalid",
    "FieldValueRequired",
    "FieldValueNotSupported",
    "FieldValueTooLong",
    "FieldValueTooMany",
];

const CEL_SKIPPED: &str = "some validation rules were not checked because the object was \
    invalid; correct the existing errors to complete validation";

fn child(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

fn render(v: &Value) -> String {
    match v {
        Value::String(s) => format!("{s:?}"),
        Value::Null => "\"null\"".into(),
        other => other.to_string(),
    }
}

fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_f64() => "number",
        Value::Number(_) => "integer",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn push(out: &mut Vec<Cause>, reason: &'static str, path: &str, message: String) {
    out.push(Cause {
        reason,
        message,
        field: path.to_string(),
    });
}

fn invalid(out: &mut Vec<Cause>, path: &str, v: &Value, what: String) {
    push(
        out,
        "FieldValueInvalid",
        path,
        format!("Invalid value: {}: {path} in body {what}", render(v)),
    );
}

fn type_ok(t: &str, v: &Value) -> bool {
    match t {
        "object" => v.is_object(),
        "array" => v.is_array(),
        "string" => v.is_string(),
        "integer" => v.is_i64() || v.is_u64(),
        "number" => v.is_number(),
        "boolean" => v.is_boolean(),
        _ => true,
    }
}

fn check(schema: &Value, v: &Value, path: &str, out: &mut Vec<Cause>) {
    if v.is_null() && schema["nullable"] == true {
        return;
    }
    if schema["x-kubernetes-int-or-string"] == true {
        if !(v.is_string() || v.is_i64() || v.is_u64()) {
            let msg = format!(
                "Invalid value: {}: {path} in body must be of type int-or-string: {:?}",
                render(v),
                json_type(v)
            );
            push(out, "FieldValueTypeInvalid", path, msg);
            return;
        }
    } else if let Some(t) = schema["type"].as_str()
        && !type_ok(t, v)
    {
        let actual = json_type(v);
        let msg =
            format!("Invalid value: {actual:?}: {path} in body must be of type {t}: {actual:?}");
        push(out, "FieldValueTypeInvalid", path, msg);
        return;
    }
    check_enum(schema, v, path, out);
    check_combinators(schema, v, path, out);
    match v {
        Value::String(s) => check_string(schema, s, v, path, out),
        Value::Number(_) => check_number(schema, v, path, out),
        Value::Array(items) => check_array(schema, items, v, path, out),
        Value::Object(map) => check_object(schema, map, path, out),
        _ => {}
    }
}

fn check_enum(schema: &Value, v: &Value, path: &str, out: &mut Vec<Cause>) {
    let Some(allowed) = schema["enum"].as_array() else {
        return;
    };
    if !allowed.contains(v) {
        let list: Vec<String> = allowed.iter().map(render).collect();
        let msg = format!(
            "Unsupported value: {}: supported values: {}",
            render(v),
            list.join(", ")
        );
        push(out, "FieldValueNotSupported", path, msg);
    }
}

fn check_combinators(schema: &Value, v: &Value, path: &str, out: &mut Vec<Cause>) {
    for s in schema["allOf"].as_array().into_iter().flatten() {
        check(s, v, path, out);
    }
    let passes = |s: &Value| {
        let mut e = Vec::new();
        check(s, v, path, &mut e);
        e.is_empty()
    };
    if let Some(any) = schema["anyOf"].as_array()
        && !any.iter().any(passes)
    {
        invalid(
            out,
            path,
            v,
            "must validate at least one schema (anyOf)".into(),
        );
    }
    if let Some(one) = schema["oneOf"].as_array()
        && one.iter().filter(|s| passes(s)).count() != 1
    {
        invalid(
            out,
            path,
            v,
            "must validate one and only one schema (oneOf)".into(),
        );
    }
}

static REGEXES: LazyLock<Mutex<HashMap<String, Option<Regex>>>> =
    LazyLock::new(|| Mutex::new(HashMap::new()));

fn pattern_matches(pattern: &str, s: &str) -> bool {
    let Ok(mut cache) = REGEXES.lock() else {
        return true;
    };
    let re = cache
        .entry(pattern.to_string())
        .or_insert_with(|| Regex::new(pattern).ok());
    re.as_ref().is_none_or(|re| re.is_match(s))
}

fn check_string(schema: &Value, s: &str, v: &Value, path: &str, out: &mut Vec<Cause>) {
    if let Some(max) = schema["maxLength"].as_u64()
        && s.chars().count() as u64 > max
    {
        push(
            out,
            "FieldValueTooLong",
            path,
            format!("Too long: may not be more than {max} bytes"),
        );
    }
    if let Some(min) = schema["minLength"].as_u64()
        && (s.chars().count() as u64) < min
    {
        invalid(out, path, v, format!("should be at least {min} chars long"));
    }
    if let Some(p) = schema["pattern"].as_str()
        && !pattern_matches(p, s)
    {
        invalid(out, path, v, format!("should match '{p}'"));
    }
}

/// A float as Go's `%v` prints it (`100`, not `100.0`).
fn go_number(x: f64) -> String {
    if x.fract() == 0.0 && x.abs() < 1e15 {
        format!("{}", x as i64)
    } else {
        x.to_string()
    }
}

fn check_number(schema: &Value, v: &Value, path: &str, out: &mut Vec<Cause>) {
    let x = v.as_f64().unwrap_or_default();
    if let Some(min) = schema["minimum"].as_f64() {
        let excl = schema["exclusiveMinimum"] == true;
        if x < min || (excl && x == min) {
            let op = if excl {
                "greater than"
            } else {
                "greater than or equal to"
            };
            invalid(out, path, v, format!("should be {op} {}", go_number(min)));
        }
    }
    if let Some(max) = schema["maximum"].as_f64() {
        let excl = schema["exclusiveMaximum"] == true;
        if x > max || (excl && x == max) {
            let op = if excl {
                "less than"
            } else {
                "less than or equal to"
            };
            invalid(out, path, v, format!("should be {op} {}", go_number(max)));
        }
    }
}

fn check_array(schema: &Value, items: &[Value], v: &Value, path: &str, out: &mut Vec<Cause>) {
    let n = items.len() as u64;
    if let Some(max) = schema["maxItems"].as_u64()
        && n > max
    {
        push(
            out,
            "FieldValueTooMany",
            path,
            format!("Too many: {n}: must have at most {max} items"),
        );
    }
    if let Some(min) = schema["minItems"].as_u64()
        && n < min
    {
        invalid(out, path, v, format!("should have at least {min} items"));
    }
    if schema["items"].is_object() {
        for (i, item) in items.iter().enumerate() {
            check(&schema["items"], item, &format!("{path}[{i}]"), out);
        }
    }
}

fn check_object(schema: &Value, map: &Map<String, Value>, path: &str, out: &mut Vec<Cause>) {
    for r in schema["required"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
    {
        if map.get(r).is_none_or(Value::is_null) {
            push(
                out,
                "FieldValueRequired",
                &child(path, r),
                "Required value".into(),
            );
        }
    }
    let n = map.len() as u64;
    if let Some(max) = schema["maxProperties"].as_u64()
        && n > max
    {
        push(
            out,
            "FieldValueTooMany",
            path,
            format!("Too many: {n}: must have at most {max} items"),
        );
    }
    if let Some(min) = schema["minProperties"].as_u64()
        && n < min
    {
        let v = Value::Object(map.clone());
        invalid(
            out,
            path,
            &v,
            format!("should have at least {min} properties"),
        );
    }
    let props = schema["properties"].as_object();
    for (k, val) in map {
        if path.is_empty() && ROOT_KEYS.contains(&k.as_str()) {
            continue;
        }
        if let Some(ps) = props.and_then(|p| p.get(k)) {
            if !(val.is_null() && ps["nullable"] != true) {
                check(ps, val, &child(path, k), out);
            }
        } else if schema["additionalProperties"].is_object() {
            check(
                &schema["additionalProperties"],
                val,
                &format!("{path}[{k}]"),
                out,
            );
        }
    }
}
