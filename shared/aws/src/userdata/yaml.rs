//! JSON rendered as block YAML, for the nodeadm `NodeConfig` part (strings double-quoted, so
//! any value is safe).

use serde_json::Value;

/// Renders JSON as block YAML (strings double-quoted, so any value is safe).
pub fn to_yaml(v: &Value) -> String {
    let mut out = String::new();
    yaml_block(v, 0, &mut out);
    out
}

fn scalar(v: &Value) -> Option<String> {
    match v {
        Value::Object(m) if m.is_empty() => Some("{}".into()),
        Value::Array(a) if a.is_empty() => Some("[]".into()),
        Value::Object(_) | Value::Array(_) => None,
        other => Some(other.to_string()),
    }
}

fn yaml_block(v: &Value, indent: usize, out: &mut String) {
    let pad = " ".repeat(indent);
    match v {
        Value::Object(m) => {
            for (k, val) in m {
                let key = serde_json::to_string(k).unwrap_or_default();
                match scalar(val) {
                    Some(s) => out.push_str(&format!("{pad}{key}: {s}\n")),
                    None => {
                        out.push_str(&format!("{pad}{key}:\n"));
                        yaml_block(val, indent + 2, out);
                    }
                }
            }
        }
        Value::Array(a) => {
            for item in a {
                match scalar(item) {
                    Some(s) => out.push_str(&format!("{pad}- {s}\n")),
                    None => {
                        let mut inner = String::new();
                        yaml_block(item, indent + 2, &mut inner);
                        out.push_str(&format!("{pad}- {}", &inner[indent + 2..]));
                    }
                }
            }
        }
        other => out.push_str(&format!("{pad}{}\n", scalar(other).unwrap_or_default())),
    }
}
