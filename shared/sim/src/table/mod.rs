//! Server-side printing (`Accept: application/json;as=Table;v=v1;g=meta.k8s.io`), what
//! `kubectl get` asks for: a `meta.k8s.io/v1` Table with NAME, a custom resource's
//! `additionalPrinterColumns` (Karpenter's TYPE, CAPACITY, ZONE, NODE, READY, … for
//! NodeClaims) and AGE, evaluated by a small JSONPath reader; kube-apiserver's own columns
//! for the common built-in kinds ([`builtin`]).

pub mod builtin;

use std::sync::Arc;

use jiff::Timestamp;
use serde_json::{Value, json};

use crate::registry::ResourceInfo;

/// Whether the client asked for a Table.
pub fn wanted(accept: &str) -> bool {
    accept.split(',').any(|a| a.contains("as=Table"))
}

/// One step of a JSONPath: a field, optionally filtered by `[?(@.key=="value")]`.
#[derive(Debug, PartialEq)]
struct Step {
    field: String,
    filter: Option<(String, String)>,
}

/// The steps of `.a.b\.c[?(@.type=="Ready")].status` (escaped dots belong to the name).
fn steps(path: &str) -> Vec<Step> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut chars = path.trim_start_matches('.').chars().peekable();
    let mut filter = None;
    while let Some(c) = chars.next() {
        match c {
            '\\' => cur.extend(chars.next()),
            '[' => {
                let inner: String = chars.by_ref().take_while(|c| *c != ']').collect();
                let f = inner.trim_start_matches("?(@.").trim_end_matches(')');
                if let Some((k, v)) = f.split_once("==") {
                    filter = Some((k.to_string(), v.trim_matches('"').to_string()));
                }
            }
            '.' => out.push(Step {
                field: std::mem::take(&mut cur),
                filter: filter.take(),
            }),
            c => cur.push(c),
        }
    }
    out.push(Step { field: cur, filter });
    out
}

/// The value at `path` in `obj`, if any.
pub fn lookup<'a>(obj: &'a Value, path: &str) -> Option<&'a Value> {
    let mut v = obj;
    for s in steps(path) {
        v = v.get(&s.field)?;
        if let Some((k, want)) = &s.filter {
            v = v
                .as_array()?
                .iter()
                .find(|e| e[k.as_str()].as_str() == Some(want.as_str()))?;
        }
    }
    Some(v)
}

/// The age of `since` (RFC 3339) at `now`.
pub(crate) fn age_since(since: &str, now: Timestamp) -> String {
    match since.parse::<Timestamp>() {
        Ok(t) => age(now.duration_since(t).as_secs()),
        Err(_) => "<unknown>".into(),
    }
}

/// kubectl's short age: `45s`, `12m`, `3h4m`, `2d`.
pub fn age(secs: i64) -> String {
    let s = secs.max(0);
    match s {
        0..60 => format!("{s}s"),
        60..3600 => format!("{}m", s / 60),
        3600..86400 => match (s / 60) % 60 {
            0 => format!("{}h", s / 3600),
            m => format!("{}h{m}m", s / 3600),
        },
        _ => format!("{}d", s / 86400),
    }
}

fn cell(obj: &Value, col: &Value, now: Timestamp) -> Value {
    let path = col["jsonPath"].as_str().unwrap_or_default();
    match lookup(obj, path) {
        None | Some(Value::Null) => json!("<none>"),
        Some(Value::String(s)) if col["type"] == "date" => json!(age_since(s, now)),
        Some(v @ (Value::String(_) | Value::Number(_) | Value::Bool(_))) => v.clone(),
        Some(v) => json!(v.to_string()),
    }
}

/// What each row carries of its object (`includeObject`; `kubectl get --sort-by` asks for
/// `Object` to sort on its fields).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Include {
    None,
    #[default]
    Metadata,
    Object,
}

impl Include {
    /// The query parameter's value (anything unknown is the default, `Metadata`).
    pub fn parse(v: &str) -> Self {
        match v {
            "None" => Include::None,
            "Object" => Include::Object,
            _ => Include::Metadata,
        }
    }
}

fn row(o: &Value, cells: Vec<Value>, include: Include) -> Value {
    match include {
        Include::None => json!({"cells": cells}),
        Include::Metadata => json!({"cells": cells, "object": {"kind": "PartialObjectMetadata",
            "apiVersion": "meta.k8s.io/v1", "metadata": o["metadata"]}}),
        Include::Object => json!({"cells": cells, "object": o}),
    }
}

fn document(columns: Vec<Value>, rows: Vec<Value>, rv: u64) -> Value {
    json!({"kind": "Table", "apiVersion": "meta.k8s.io/v1",
        "metadata": {"resourceVersion": rv.to_string()}, "columnDefinitions": columns, "rows": rows})
}

/// The Table of `items` (one for a single GET).
pub fn table(
    info: &ResourceInfo,
    items: &[Arc<Value>],
    rv: u64,
    now: Timestamp,
    include: Include,
) -> Value {
    if let Some(cols) = builtin::columns(&info.group, &info.plural) {
        let columns = cols
            .iter()
            .map(|c| {
                let format = if c.name == "Name" { "name" } else { "" };
                json!({"name": c.name, "type": c.kind, "format": format, "description": "",
                    "priority": c.priority})
            })
            .collect();
        let rows = items
            .iter()
            .map(|o| row(o, cols.iter().map(|c| (c.cell)(o, now)).collect(), include))
            .collect();
        return document(columns, rows, rv);
    }
    let mut columns = vec![json!({"name": "Name", "type": "string", "format": "name",
        "description": "Name must be unique within a namespace.", "priority": 0})];
    let mut printed: Vec<Value> = info.printer_columns.clone();
    if !printed
        .iter()
        .any(|c| c["jsonPath"] == ".metadata.creationTimestamp")
    {
        printed.push(
            json!({"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"}),
        );
    }
    for c in &printed {
        columns.push(json!({"name": c["name"], "type": c["type"], "format": "",
            "description": c["description"].as_str().unwrap_or_default(),
            "priority": c["priority"].as_i64().unwrap_or(0)}));
    }
    let rows: Vec<Value> = items
        .iter()
        .map(|o| {
            let mut cells = vec![o["metadata"]["name"].clone()];
            cells.extend(printed.iter().map(|c| cell(o, c, now)));
            row(o, cells, include)
        })
        .collect();
    document(columns, rows, rv)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jsonpaths_of_karpenters_printer_columns() {
        let o = json!({"metadata": {"labels": {"node.kubernetes.io/instance-type": "m5.large"}},
            "status": {"conditions": [{"type": "Launched", "status": "True"},
                {"type": "Ready", "status": "False"}], "nodeName": "n1"}});
        let at = |p: &str| lookup(&o, p).cloned();
        assert_eq!(
            at(r".metadata.labels.node\.kubernetes\.io/instance-type"),
            Some(json!("m5.large"))
        );
        assert_eq!(
            at(r#".status.conditions[?(@.type=="Ready")].status"#),
            Some(json!("False"))
        );
        assert_eq!(at(".status.nodeName"), Some(json!("n1")));
        assert_eq!(
            at(r#".status.conditions[?(@.type=="Drifted")].status"#),
            None
        );
        assert_eq!(at(".spec.weight"), None);
        assert!(wanted(
            "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"
        ));
        assert!(!wanted("application/json"));
    }

    #[test]
    fn ages_read_like_kubectl() {
        assert_eq!(age(5), "5s");
        assert_eq!(age(125), "2m");
        assert_eq!(age(3600), "1h");
        assert_eq!(age(3600 + 240), "1h4m");
        assert_eq!(age(3 * 86400 + 5), "3d");
    }
}
