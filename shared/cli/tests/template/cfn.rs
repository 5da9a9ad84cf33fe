//! `template.yaml` as JSON: CloudFormation's short tags become their long forms (`!Ref X` →
//! `{"Ref": "X"}`, `!GetAtt A.B` → `{"Fn::GetAtt": ["A", "B"]}`, `!Sub s` → `{"Fn::Sub": s}`),
//! with helpers for the parts the checks read: resources by type, a function's role and its
//! Allow statements, and references between resources.

use std::collections::BTreeSet;

use serde::Deserialize;
use serde_json::{Map, Value, json};
use yaml_serde::value::TaggedValue;

/// The parsed template.
pub struct Template {
    pub doc: Value,
}

fn tagged(t: &TaggedValue) -> Value {
    let name = t.tag.to_string();
    let name = name.trim_start_matches('!');
    let inner = to_json(&t.value);
    match name {
        "Ref" | "Condition" => json!({ name: inner }),
        "GetAtt" => match inner.as_str().and_then(|s| s.split_once('.')) {
            Some((a, b)) => json!({"Fn::GetAtt": [a, b]}),
            None => json!({"Fn::GetAtt": inner}),
        },
        other => json!({ format!("Fn::{other}"): inner }),
    }
}

fn to_json(v: &yaml_serde::Value) -> Value {
    use yaml_serde::Value as Y;
    match v {
        Y::Null => Value::Null,
        Y::Bool(b) => json!(b),
        Y::Number(n) => serde_json::to_value(n).unwrap_or(Value::Null),
        Y::String(s) => json!(s),
        Y::Sequence(s) => Value::Array(s.iter().map(to_json).collect()),
        Y::Mapping(m) => {
            let mut out = Map::new();
            for (k, v) in m {
                let key = match k {
                    Y::String(s) => s.clone(),
                    other => to_json(other).to_string(),
                };
                out.insert(key, to_json(v));
            }
            Value::Object(out)
        }
        Y::Tagged(t) => tagged(t),
    }
}

/// A one-element list or a string, as IAM writes Action and Resource.
pub fn strings(v: &Value) -> Vec<Value> {
    match v {
        Value::Array(a) => a.clone(),
        Value::Null => Vec::new(),
        other => vec![other.clone()],
    }
}

/// Every resource logical id `v` refers to (Ref, GetAtt, and `${X}` / `${X.Attr}` in Sub).
pub fn references(v: &Value) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    collect_refs(v, &mut out);
    out
}

fn collect_refs(v: &Value, out: &mut BTreeSet<String>) {
    match v {
        Value::Object(m) => {
            if let Some(Value::String(r)) = m.get("Ref") {
                out.insert(r.clone());
            }
            if let Some(Value::Array(a)) = m.get("Fn::GetAtt")
                && let Some(Value::String(r)) = a.first()
            {
                out.insert(r.clone());
            }
            if let Some(s) = m.get("Fn::Sub") {
                let text = match s {
                    Value::Array(a) => a.first().cloned().unwrap_or_default(),
                    other => other.clone(),
                };
                for part in text.as_str().unwrap_or_default().split("${").skip(1) {
                    let name = part.split('}').next().unwrap_or_default();
                    out.insert(name.split('.').next().unwrap_or_default().to_string());
                }
            }
            m.values().for_each(|x| collect_refs(x, out));
        }
        Value::Array(a) => a.iter().for_each(|x| collect_refs(x, out)),
        _ => {}
    }
}

impl Template {
    pub fn load(path: &str) -> Template {
        let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"));
        let yaml = yaml_serde::Value::deserialize(yaml_serde::Deserializer::from_str(&text))
            .unwrap_or_else(|e| panic!("{path}: {e}"));
        Template {
            doc: to_json(&yaml),
        }
    }

    pub fn resource(&self, id: &str) -> &Value {
        let r = &self.doc["Resources"][id];
        assert!(r.is_object(), "template.yaml: no resource {id}");
        r
    }

    pub fn has_resource(&self, id: &str) -> bool {
        self.doc["Resources"][id].is_object()
    }

    /// Logical ids of the resources of `kind`.
    pub fn of_type(&self, kind: &str) -> Vec<String> {
        let all = self.doc["Resources"]
            .as_object()
            .cloned()
            .unwrap_or_default();
        all.into_iter()
            .filter(|(_, r)| r["Type"] == kind)
            .map(|(id, _)| id)
            .collect()
    }

    /// The role resource a function runs with (`Role: !GetAtt X.Arn`).
    pub fn role_of(&self, function: &str) -> String {
        let role = &self.resource(function)["Properties"]["Role"];
        match role["Fn::GetAtt"].as_array().map(Vec::as_slice) {
            Some([Value::String(id), Value::String(attr)]) if attr == "Arn" => id.clone(),
            _ => panic!("{function}: Role is not !GetAtt <role>.Arn: {role}"),
        }
    }

    /// The Allow statements of a role's inline policies.
    pub fn statements(&self, role: &str) -> Vec<Value> {
        let policies = strings(&self.resource(role)["Properties"]["Policies"]);
        let mut out = Vec::new();
        for p in policies {
            for s in strings(&p["PolicyDocument"]["Statement"]) {
                assert_eq!(s["Effect"], "Allow", "{role}: only Allow statements: {s}");
                out.push(s);
            }
        }
        out
    }

    /// A function's environment: the Globals' variables overridden by its own.
    pub fn environment(&self, function: &str) -> Map<String, Value> {
        let mut env = self.doc["Globals"]["Function"]["Environment"]["Variables"]
            .as_object()
            .cloned()
            .unwrap_or_default();
        let own = &self.resource(function)["Properties"]["Environment"]["Variables"];
        env.extend(own.as_object().cloned().unwrap_or_default());
        env
    }
}
