//! What `cargo metadata` says about the workspace: the workspace crates each function binary
//! links (normal dependencies, transitively) with their root files, and every operation of
//! the AWS SDK crates in the lock file (the `src/operation/<name>.rs` modules of each
//! `aws-sdk-*` package), keyed by the fluent-builder method name.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

/// The parsed metadata.
pub struct Metadata {
    doc: Value,
}

/// A crate to index: its ident and root file.
pub struct CrateRoot {
    pub ident: String,
    pub root: PathBuf,
}

/// IAM's service prefix for an SDK package.
fn service_prefix(package: &str) -> Option<String> {
    let service = package.strip_prefix("aws-sdk-")?;
    Some(match service {
        "eventbridge" => "events".to_string(),
        other => other.to_string(),
    })
}

/// `describe_instance_types` → `DescribeInstanceTypes`.
pub fn pascal(snake: &str) -> String {
    snake
        .split('_')
        .map(|w| {
            let mut c = w.chars();
            c.next()
                .map(|f| f.to_ascii_uppercase().to_string() + c.as_str())
                .unwrap_or_default()
        })
        .collect()
}

impl Metadata {
    pub fn load(workspace: &Path) -> Metadata {
        let out = Command::new(env!("CARGO"))
            .args(["metadata", "--format-version", "1", "--offline"])
            .current_dir(workspace)
            .output()
            .expect("cargo metadata runs");
        assert!(
            out.status.success(),
            "cargo metadata: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        Metadata {
            doc: serde_json::from_slice(&out.stdout).expect("cargo metadata prints JSON"),
        }
    }

    fn packages(&self) -> &[Value] {
        self.doc["packages"].as_array().map_or(&[], Vec::as_slice)
    }

    fn package(&self, id: &str) -> &Value {
        self.packages()
            .iter()
            .find(|p| p["id"] == id)
            .unwrap_or_else(|| panic!("no package {id}"))
    }

    fn members(&self) -> BTreeSet<String> {
        let m = self.doc["workspace_members"].as_array().cloned();
        m.unwrap_or_default()
            .iter()
            .filter_map(|v| v.as_str().map(str::to_string))
            .collect()
    }

    /// The package id of the workspace member that builds `binary`.
    fn binary_package(&self, binary: &str) -> (String, PathBuf) {
        for id in self.members() {
            let p = self.package(&id);
            for t in p["targets"].as_array().into_iter().flatten() {
                if t["name"] == binary && t["kind"][0] == "bin" {
                    let src = PathBuf::from(t["src_path"].as_str().unwrap_or_default());
                    return (id, src);
                }
            }
        }
        panic!("no workspace binary named {binary}");
    }

    /// The binary's crate and every workspace library it links, each with its root file.
    pub fn crates_of(&self, binary: &str) -> Vec<CrateRoot> {
        let members = self.members();
        let (bin_id, bin_root) = self.binary_package(binary);
        let mut out = vec![CrateRoot {
            ident: binary.replace('-', "_"),
            root: bin_root,
        }];
        let nodes = self.doc["resolve"]["nodes"].as_array().cloned();
        let nodes = nodes.unwrap_or_default();
        let mut seen = BTreeSet::from([bin_id.clone()]);
        let mut queue = vec![bin_id.clone()];
        while let Some(id) = queue.pop() {
            let node = nodes.iter().find(|n| n["id"] == id.as_str());
            for dep in node
                .and_then(|n| n["deps"].as_array())
                .into_iter()
                .flatten()
            {
                let normal = dep["dep_kinds"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .any(|k| k["kind"].is_null());
                let dep_id = dep["pkg"].as_str().unwrap_or_default().to_string();
                if normal && members.contains(&dep_id) && seen.insert(dep_id.clone()) {
                    queue.push(dep_id);
                }
            }
        }
        for id in seen.iter().filter(|id| **id != bin_id) {
            let p = self.package(id);
            let lib = p["targets"].as_array().into_iter().flatten().find(|t| {
                t["kind"]
                    .as_array()
                    .is_some_and(|k| k.iter().any(|k| k == "lib"))
            });
            if let Some(t) = lib {
                out.push(CrateRoot {
                    ident: t["name"].as_str().unwrap_or_default().replace('-', "_"),
                    root: PathBuf::from(t["src_path"].as_str().unwrap_or_default()),
                });
            }
        }
        out
    }

    /// SDK operation method name → the IAM service prefixes that have it.
    pub fn sdk_operations(&self) -> BTreeMap<String, Vec<String>> {
        let mut ops: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for p in self.packages() {
            let name = p["name"].as_str().unwrap_or_default();
            let Some(prefix) = service_prefix(name) else {
                continue;
            };
            let manifest = PathBuf::from(p["manifest_path"].as_str().unwrap_or_default());
            let dir = manifest.with_file_name("src").join("operation");
            let Ok(entries) = std::fs::read_dir(&dir) else {
                continue;
            };
            for e in entries.flatten() {
                let file = e.file_name().to_string_lossy().to_string();
                if let Some(op) = file.strip_suffix(".rs") {
                    ops.entry(op.to_string()).or_default().push(prefix.clone());
                }
            }
        }
        assert!(!ops.is_empty(), "no AWS SDK operations found");
        ops
    }
}
