//! Reads `kerf plan` inputs: files, directories and stdin, YAML (multi-document) or JSON, each
//! document one object or a `List`, tagged with where it came from.

use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::Value;

use crate::error::{CliError, Location};

/// One Kubernetes object and where it came from.
#[derive(Clone, Debug)]
pub struct Doc {
    pub at: Location,
    pub value: Value,
}

impl Doc {
    pub fn kind(&self) -> &str {
        self.value.get("kind").and_then(Value::as_str).unwrap_or("")
    }

    pub fn api_version(&self) -> &str {
        self.value
            .get("apiVersion")
            .and_then(Value::as_str)
            .unwrap_or("")
    }
}

/// Everything read, plus the raw bytes (for deterministic name seeds).
#[derive(Debug, Default)]
pub struct Inputs {
    pub docs: Vec<Doc>,
    pub bytes: Vec<u8>,
}

/// Reads every argument (`-` is stdin); directories are read in name order.
pub fn read(args: &[String]) -> Result<Inputs, CliError> {
    let mut out = Inputs::default();
    for a in args {
        if a == "-" {
            let mut text = String::new();
            std::io::stdin()
                .read_to_string(&mut text)
                .map_err(|e| CliError::File {
                    file: "-".into(),
                    message: e.to_string(),
                })?;
            parse_into(&mut out, "-", &text)?;
        } else {
            for path in expand(Path::new(a))? {
                let file = path.display().to_string();
                let text = fs::read_to_string(&path).map_err(|e| CliError::File {
                    file: file.clone(),
                    message: e.to_string(),
                })?;
                parse_into(&mut out, &file, &text)?;
            }
        }
    }
    Ok(out)
}

fn expand(p: &Path) -> Result<Vec<PathBuf>, CliError> {
    if !p.is_dir() {
        return Ok(vec![p.to_path_buf()]);
    }
    let rd = fs::read_dir(p).map_err(|e| CliError::File {
        file: p.display().to_string(),
        message: e.to_string(),
    })?;
    let mut files: Vec<PathBuf> = rd
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|f| {
            f.is_file()
                && matches!(
                    f.extension().and_then(|x| x.to_str()),
                    Some("yaml" | "yml" | "json")
                )
        })
        .collect();
    files.sort();
    Ok(files)
}

/// Parses one file's text into documents, flattening lists.
pub fn parse_into(out: &mut Inputs, file: &str, text: &str) -> Result<(), CliError> {
    out.bytes.extend_from_slice(file.as_bytes());
    out.bytes.extend_from_slice(text.as_bytes());
    let values = if text.trim_start().starts_with('{') || text.trim_start().starts_with('[') {
        parse_json(file, text)?
    } else {
        parse_yaml(file, text)?
    };
    for (i, v) in values.into_iter().enumerate() {
        let at = Location {
            file: file.to_string(),
            document: i + 1,
            object: String::new(),
        };
        flatten(out, at, v);
    }
    Ok(())
}

fn parse_json(file: &str, text: &str) -> Result<Vec<Value>, CliError> {
    let mut out = Vec::new();
    for v in serde_json::Deserializer::from_str(text).into_iter::<Value>() {
        out.push(v.map_err(|e| CliError::File {
            file: file.into(),
            message: format!("invalid JSON: {e}"),
        })?);
    }
    Ok(out)
}

fn parse_yaml(file: &str, text: &str) -> Result<Vec<Value>, CliError> {
    let mut out = Vec::new();
    for (i, de) in serde_yaml::Deserializer::from_str(text).enumerate() {
        let v = Value::deserialize(de).map_err(|e| CliError::File {
            file: file.into(),
            message: format!("document {}: invalid YAML: {e}", i + 1),
        })?;
        out.push(v);
    }
    Ok(out)
}

fn flatten(out: &mut Inputs, at: Location, v: Value) {
    if v.is_null() {
        return;
    }
    let is_list = v
        .get("kind")
        .and_then(Value::as_str)
        .is_some_and(|k| k == "List" || k.ends_with("List"));
    if is_list && let Some(Value::Array(items)) = v.get("items") {
        for item in items.clone() {
            flatten(out, at.clone(), item);
        }
        return;
    }
    out.docs.push(Doc { at, value: v });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn yaml_documents_and_lists() {
        let mut i = Inputs::default();
        let text = "kind: Pod\nmetadata: {name: a}\n---\nkind: List\nitems:\n- kind: Node\n  metadata: {name: n}\n- kind: Pod\n  metadata: {name: b}\n---\n";
        parse_into(&mut i, "x.yaml", text).unwrap();
        let kinds: Vec<&str> = i.docs.iter().map(Doc::kind).collect();
        assert_eq!(kinds, ["Pod", "Node", "Pod"]);
        assert_eq!(i.docs[2].at.document, 2);
    }

    #[test]
    fn json_streams() {
        let mut i = Inputs::default();
        parse_into(
            &mut i,
            "x.json",
            r#"{"kind":"PodList","items":[{"kind":"Pod"}]} {"kind":"Node"}"#,
        )
        .unwrap();
        assert_eq!(i.docs.len(), 2);
    }

    #[test]
    fn malformed_yaml_names_file_and_document() {
        let mut i = Inputs::default();
        let e = parse_into(&mut i, "bad.yaml", "kind: Pod\n---\nkind: [unclosed\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("bad.yaml") && e.contains("document 2"), "{e}");
    }
}
