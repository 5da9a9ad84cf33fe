//! Manifests of the repository read as JSON documents, and the example NodePools and
//! EC2NodeClasses wherever the repository keeps them: plain manifests
//! (examples/getting-started/, infra/examples/) and the manifests scenario files embed
//! (their `objects` and `apply` steps, read with kerf-sim's scenario loader).

use std::path::Path;

use kerf_e2e::world::repo;
use kerf_sim::scenario::Scenario;
use serde_json::Value;

/// The documents of a YAML manifest (`kind: List` expanded, empty documents skipped).
pub fn documents(text: &str) -> Vec<Value> {
    let mut out = Vec::new();
    for doc in yaml_serde::Deserializer::from_str(text) {
        let v: Value = serde::Deserialize::deserialize(doc).unwrap();
        match v["items"].as_array() {
            _ if v.is_null() => {}
            Some(items) if v["kind"].as_str().is_some_and(|k| k.ends_with("List")) => {
                out.extend(items.iter().cloned())
            }
            _ => out.push(v),
        }
    }
    out
}

/// The documents of a file of the repository.
pub fn file(rel: &str) -> Vec<Value> {
    let path = repo().join(rel);
    documents(&std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{rel}: {e}")))
}

/// `(file stem, documents)` of every `.yaml` file of a directory of the repository, by name.
pub fn dir(rel: &str) -> Vec<(String, Vec<Value>)> {
    let mut paths: Vec<_> = std::fs::read_dir(repo().join(rel))
        .unwrap_or_else(|e| panic!("{rel}: {e}"))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "yaml"))
        .collect();
    paths.sort();
    paths
        .iter()
        .map(|p| {
            let stem = p.file_stem().unwrap().to_string_lossy().into_owned();
            (stem, documents(&std::fs::read_to_string(p).unwrap()))
        })
        .collect()
}

fn yaml_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            yaml_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "yaml") {
            out.push(p);
        }
    }
}

const KINDS: [&str; 2] = ["NodePool", "EC2NodeClass"];

/// Every example NodePool and EC2NodeClass: `(file, where in it, document)`.
pub fn example_objects() -> Vec<(String, String, Value)> {
    let mut files = Vec::new();
    yaml_files(&repo().join("examples"), &mut files);
    yaml_files(&repo().join("infra/examples"), &mut files);
    files.sort();
    let mut out = Vec::new();
    for path in files {
        let rel = path.strip_prefix(repo()).unwrap().display().to_string();
        let text = std::fs::read_to_string(&path).unwrap();
        let mut texts = Vec::new();
        if documents(&text)
            .iter()
            .any(|d| d.get("apiVersion").is_some())
        {
            texts.push((rel.clone(), text));
        } else {
            // A scenario: its starting objects and the manifests its steps apply.
            let s = Scenario::load(&path).unwrap_or_else(|e| panic!("{rel}: {e}"));
            let steps = s.steps.iter().filter_map(|st| st.apply.as_ref());
            for (i, src) in s.objects.iter().chain(steps).enumerate() {
                let text = s.text(src).unwrap_or_else(|e| panic!("{rel}: {e}"));
                texts.push((format!("{rel} (manifest {i})"), text));
            }
        }
        for (from, text) in texts {
            for d in documents(&text) {
                if d["kind"].as_str().is_some_and(|k| KINDS.contains(&k)) {
                    let at = format!("{from}: {} {}", d["kind"], d["metadata"]["name"]);
                    out.push((rel.clone(), at, d));
                }
            }
        }
    }
    out
}
