//! Every CEL rule of every CRD committed under infra/crds/ compiles with the sim's CEL
//! interpreter: none is silently skipped.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers outside #[test] fns

use kerf_sim::cel::Program;
use serde_json::Value;
use std::path::PathBuf;

fn crd_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../infra/crds")
}

/// `(schema path, rule)` for every `x-kubernetes-validations` entry under `schema`.
fn collect(schema: &Value, path: &str, out: &mut Vec<(String, String)>) {
    for r in schema["x-kubernetes-validations"]
        .as_array()
        .into_iter()
        .flatten()
    {
        out.push((path.to_string(), r["rule"].as_str().unwrap().to_string()));
    }
    for (k, s) in schema["properties"].as_object().into_iter().flatten() {
        collect(s, &format!("{path}.{k}"), out);
    }
    collect_in(&schema["items"], &format!("{path}[]"), out);
    collect_in(&schema["additionalProperties"], &format!("{path}{{}}"), out);
    for key in ["allOf", "anyOf", "oneOf"] {
        for s in schema[key].as_array().into_iter().flatten() {
            collect(s, path, out);
        }
    }
}

fn collect_in(schema: &Value, path: &str, out: &mut Vec<(String, String)>) {
    if schema.is_object() {
        collect(schema, path, out);
    }
}

#[test]
fn every_crd_rule_compiles() {
    let mut rules = Vec::new();
    let mut rule_lines = 0;
    for entry in std::fs::read_dir(crd_dir()).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "yaml") {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        rule_lines += text
            .lines()
            .filter(|l| l.trim_start().trim_start_matches("- ").starts_with("rule:"))
            .count();
        let crd: Value = yaml_serde::from_str(&text).unwrap();
        for v in crd["spec"]["versions"].as_array().unwrap() {
            let name = format!("{}:{}", path.display(), v["name"]);
            collect(&v["schema"]["openAPIV3Schema"], &name, &mut rules);
        }
    }
    assert!(rules.len() > 80, "only {} rules found", rules.len());
    assert_eq!(rules.len(), rule_lines, "every `rule:` line is reached");
    let failures: Vec<String> = rules
        .iter()
        .filter_map(|(path, rule)| {
            let e = Program::compile(rule).err()?;
            Some(format!("{path}: {rule}: {e}"))
        })
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
