//! Reads `kerf plan` inputs: files, directories and stdin, YAML (multi-document) or JSON, each
//! document one object or a `List`, tagged with where it came from. Objects are kept as raw
//! JSON text and deserialized straight into their types, which keeps large dumps fast and
//! small in memory.

use std::fs;
use std::hash::{Hash, Hasher};
use std::io::Read;
use std::path::{Path, PathBuf};

use rustc_hash::FxHasher;
use serde::Deserialize;
use serde_json::Value;
use serde_json::value::RawValue;

use crate::error::{CliError, Location};
use crate::fastyaml;

/// A document's body: compact JSON text (YAML documents are kept as JSON too), valid JSON
/// by construction: every document's text is read whole once, for its [`Head`], before it is
/// kept.
#[derive(Clone, Debug)]
pub enum Body {
    Json(Box<str>),
}

/// One Kubernetes object and where it came from.
#[derive(Clone, Debug)]
pub struct Doc {
    pub at: Location,
    pub api_version: String,
    pub kind: String,
    pub name: String,
    pub namespace: String,
    /// Where the object sits in its document: the indices of the `items` of the Lists around
    /// it, outermost first (empty: the document is the object).
    pub item: Vec<usize>,
    pub body: Body,
}

impl Doc {
    pub fn kind(&self) -> &str {
        &self.kind
    }

    pub fn api_version(&self) -> &str {
        &self.api_version
    }
}

/// The fields every document is routed by.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Head<'a> {
    #[serde(default)]
    api_version: String,
    #[serde(default)]
    kind: String,
    #[serde(default)]
    metadata: Option<MetaHead>,
    #[serde(default, borrow)]
    items: Option<Vec<&'a RawValue>>,
}

#[derive(Debug, Default, Deserialize)]
struct MetaHead {
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    namespace: Option<String>,
}

/// Everything read, plus a hash of the raw input (the seed for deterministic names).
#[derive(Debug, Default)]
pub struct Inputs {
    pub docs: Vec<Doc>,
    seed: u64,
}

impl Inputs {
    /// A seed that depends only on the files' names and bytes, in order.
    pub fn seed(&self) -> u64 {
        self.seed
    }
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

/// A directory's `.yaml`, `.yml` and `.json` files in name order (none is an error); any
/// other path as itself.
pub fn expand(p: &Path) -> Result<Vec<PathBuf>, CliError> {
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
    if files.is_empty() {
        return Err(CliError::File {
            file: p.display().to_string(),
            message: "a directory without .yaml, .yml or .json files".into(),
        });
    }
    Ok(files)
}

/// Parses one file's text into documents, flattening lists.
pub fn parse_into(out: &mut Inputs, file: &str, text: &str) -> Result<(), CliError> {
    let mut h = FxHasher::default();
    (out.seed, file, text).hash(&mut h);
    out.seed = h.finish();
    let t = text.trim_start();
    let documents = if t.starts_with('{') || t.starts_with('[') {
        parse_json(out, file, text)?
    } else {
        parse_yaml(out, file, text)?
    };
    if documents == 0 {
        return Err(CliError::File {
            file: file.into(),
            message: "no Kubernetes objects: the input is empty or only comments".into(),
        });
    }
    Ok(())
}

fn bad_json(file: &str, document: usize, e: serde_json::Error) -> CliError {
    CliError::File {
        file: file.into(),
        message: format!("document {document}: invalid JSON: {e}"),
    }
}

/// Reads a JSON stream; returns how many documents it held.
fn parse_json(out: &mut Inputs, file: &str, text: &str) -> Result<usize, CliError> {
    let stream = serde_json::Deserializer::from_str(text).into_iter::<&RawValue>();
    let mut documents = 0;
    for (i, raw) in stream.enumerate() {
        documents += 1;
        let raw = raw.map_err(|e| bad_json(file, i + 1, e))?;
        let at = Location {
            file: file.to_string(),
            document: i + 1,
            object: String::new(),
        };
        push_json(out, &at, Raw::Borrowed(raw.get()))?;
    }
    Ok(documents)
}

/// A document's JSON text, borrowed from a larger one or owned (not yet checked: reading its
/// [`Head`] checks it).
enum Raw<'a> {
    Borrowed(&'a str),
    Owned(String),
}

impl Raw<'_> {
    fn text(&self) -> &str {
        match self {
            Raw::Borrowed(r) => r,
            Raw::Owned(r) => r,
        }
    }

    fn into_owned(self) -> Box<str> {
        match self {
            Raw::Borrowed(r) => r.into(),
            Raw::Owned(r) => r.into_boxed_str(),
        }
    }
}

fn push_json(out: &mut Inputs, at: &Location, raw: Raw<'_>) -> Result<(), CliError> {
    out.docs.extend(docs_of(at, &[], raw)?);
    Ok(())
}

/// A document's objects: itself, or a list's items (read on every core, kept in order);
/// `item` says where `raw` sits in its document.
fn docs_of(at: &Location, item: &[usize], raw: Raw<'_>) -> Result<Vec<Doc>, CliError> {
    let head: Head<'_> =
        serde_json::from_str(raw.text()).map_err(|e| bad_json(&at.file, at.document, e))?;
    if is_list(&head.kind)
        && let Some(items) = head.items
    {
        let indexed: Vec<(usize, &RawValue)> = items.into_iter().enumerate().collect();
        let read = crate::parallel::map(&indexed, |(i, raw)| {
            let within: Vec<usize> = item.iter().copied().chain([*i]).collect();
            docs_of(at, &within, Raw::Borrowed(raw.get()))
        });
        let mut docs = Vec::with_capacity(indexed.len());
        for d in read {
            docs.extend(d?);
        }
        return Ok(docs);
    }
    let meta = head.metadata.unwrap_or_default();
    let (api_version, kind) = (head.api_version, head.kind);
    Ok(vec![Doc {
        at: at.clone(),
        api_version,
        kind,
        name: meta.name.unwrap_or_default(),
        namespace: meta.namespace.unwrap_or_default(),
        item: item.to_vec(),
        body: Body::Json(raw.into_owned()),
    }])
}

fn is_list(kind: &str) -> bool {
    kind == "List" || kind.ends_with("List")
}

/// Each YAML document is kept as compact JSON text, like JSON input: the text takes a fraction
/// of a value's memory and converts to typed objects faster. Dumps in the shape `kubectl get
/// -o yaml` writes are read by [`fastyaml`]; anything else through a value by the full YAML
/// reader, which also reports errors. Returns how many documents (not counting empty ones) it
/// held.
fn parse_yaml(out: &mut Inputs, file: &str, text: &str) -> Result<usize, CliError> {
    let Some(docs) = fastyaml::documents(text) else {
        return parse_yaml_fully(out, file, text);
    };
    let count = docs.len();
    // Checking each document's JSON and reading its head is independent work too.
    let read = crate::parallel::map_vec(docs, |d| {
        let at = Location {
            file: file.to_string(),
            document: d.number,
            object: String::new(),
        };
        docs_of(&at, &[], Raw::Owned(d.json))
    });
    for d in read {
        out.docs.extend(d?);
    }
    Ok(count)
}

/// [`parse_yaml`] through the full YAML reader.
fn parse_yaml_fully(out: &mut Inputs, file: &str, text: &str) -> Result<usize, CliError> {
    let mut documents = 0;
    for (i, de) in yaml_serde::Deserializer::from_str(text).enumerate() {
        let bad = |message: String| CliError::File {
            file: file.into(),
            message: format!("document {}: {message}", i + 1),
        };
        let v = Value::deserialize(de).map_err(|e| bad(format!("invalid YAML: {e}")))?;
        if v.is_null() {
            continue;
        }
        documents += 1;
        let raw = serde_json::to_string(&v)
            .map_err(|e| bad(format!("not representable as JSON: {e}")))?;
        drop(v);
        let at = Location {
            file: file.to_string(),
            document: i + 1,
            object: String::new(),
        };
        push_json(out, &at, Raw::Owned(raw))?;
    }
    Ok(documents)
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
        assert_eq!(i.docs[2].name, "b");
    }

    #[test]
    fn json_streams_and_lists() {
        let mut i = Inputs::default();
        parse_into(
            &mut i,
            "x.json",
            r#"{"kind":"PodList","items":[{"kind":"Pod","metadata":{"name":"p","namespace":"ns"}}]} {"kind":"Node"}"#,
        )
        .unwrap();
        assert_eq!(i.docs.len(), 2);
        assert_eq!(
            (i.docs[0].name.as_str(), i.docs[0].namespace.as_str()),
            ("p", "ns")
        );
        assert_eq!(i.docs[1].at.document, 2);
    }

    #[test]
    fn malformed_yaml_names_file_and_document() {
        let mut i = Inputs::default();
        let e = parse_into(&mut i, "bad.yaml", "kind: Pod\n---\nkind: [unclosed\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("bad.yaml") && e.contains("document 2"), "{e}");
    }

    #[test]
    fn malformed_json_names_file_and_document() {
        let mut i = Inputs::default();
        let e = parse_into(&mut i, "bad.json", "{\"kind\":\"Pod\"} {\"kind\": }")
            .unwrap_err()
            .to_string();
        assert!(e.contains("bad.json") && e.contains("document 2"), "{e}");
    }

    #[test]
    fn the_seed_depends_on_content() {
        let mut a = Inputs::default();
        let mut b = Inputs::default();
        parse_into(&mut a, "x.yaml", "kind: Pod\n").unwrap();
        parse_into(&mut b, "x.yaml", "kind: Node\n").unwrap();
        assert_ne!(a.seed(), b.seed());
    }
}
