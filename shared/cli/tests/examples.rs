//! The example manifests in `infra/examples`: every NodePool and EC2NodeClass passes Kerf's
//! admission validation (the CRD schemas with their CEL rules, and Kerf's own checks), and
//! `kerf plan` with them launches capacity for the getting-started workload.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;

use clap::Parser;
use kerf_cli::args::Cli;
use kerf_control::webhook::validate::{Kind, validate};
use serde::Deserialize;
use serde_json::Value;

fn repo(path: &str) -> String {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    root.join(path).display().to_string()
}

fn documents(path: &str) -> Vec<Value> {
    let text = std::fs::read_to_string(repo(path)).unwrap();
    yaml_serde::Deserializer::from_str(&text)
        .map(|d| serde_json::to_value(yaml_serde::Value::deserialize(d).unwrap()).unwrap())
        .filter(|v| !v.is_null())
        .collect()
}

const EXAMPLES: [&str; 2] = ["infra/examples/default.yaml", "infra/examples/spot.yaml"];

#[test]
fn every_example_object_passes_admission() {
    let mut kinds = Vec::new();
    for file in EXAMPLES {
        for doc in documents(file) {
            let group = doc["apiVersion"]
                .as_str()
                .unwrap()
                .split('/')
                .next()
                .unwrap();
            let kind = Kind::of(group, doc["kind"].as_str().unwrap()).unwrap();
            let errors = validate(kind, &doc, None);
            assert!(
                errors.is_empty(),
                "{file}: {}: {errors:?}",
                doc["metadata"]["name"]
            );
            kinds.push(format!("{}/{}", doc["kind"], doc["metadata"]["name"]));
        }
    }
    assert_eq!(kinds.len(), 3, "{kinds:?}");
}

#[test]
fn the_examples_launch_capacity_for_pending_pods() {
    let args = [
        "kerf",
        "plan",
        &repo(EXAMPLES[0]),
        &repo(EXAMPLES[1]),
        &repo("examples/getting-started/inflate.yaml"),
        "--output",
        "json",
    ];
    let cli = Cli::try_parse_from(args).unwrap();
    let plan: Value = serde_json::from_str(&kerf_cli::run(&cli, 0).unwrap().stdout).unwrap();
    assert_eq!(plan["summary"]["pendingPods"], 5, "{plan}");
    assert_eq!(plan["summary"]["scheduledPods"], 5, "{plan}");
    let pools: Vec<&str> = plan["launches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["nodePool"].as_str().unwrap())
        .collect();
    assert!(!pools.is_empty());
    assert!(
        pools.iter().all(|p| *p == "spot"),
        "the heavier spot pool wins: {pools:?}"
    );
}
