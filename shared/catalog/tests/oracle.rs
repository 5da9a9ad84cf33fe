//! The oracle: for every instance type in Karpenter's reference data, the allocatable and
//! labels Kerf computes from the generated spec (AL2023, no block device mappings) must equal
//! Karpenter's exactly.

#![allow(clippy::expect_used)] // test helpers: a failure should stop the test loudly

use std::collections::BTreeMap;
use std::path::PathBuf;

use kerf_catalog::bundled::bundled_specs;
use kerf_catalog::quantity;
use kerf_catalog::{Ec2Spec, NodeClassSettings, SpecSource, StaticPrices, instance_type};
use serde::Deserialize;

#[derive(Deserialize)]
struct Reference {
    instance_types: BTreeMap<String, RefType>,
}

#[derive(Deserialize)]
struct RefType {
    allocatable: BTreeMap<String, String>,
    labels: BTreeMap<String, String>,
}

fn reference() -> Reference {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/data/ec2-instance-types.json");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "oracle data {} is missing ({e}); it ships with the shared reference data and is \
             always present in CI",
            path.display()
        )
    });
    serde_json::from_str(&text).expect("oracle JSON")
}

/// Differences between Kerf's result for one type and Karpenter's.
fn diff(spec: &Ec2Spec, want: &RefType) -> Vec<String> {
    let it = instance_type(
        spec,
        &[],
        &StaticPrices::default(),
        &NodeClassSettings::default(),
    )
    .expect("build");
    let mut out = Vec::new();
    for (k, v) in &want.allocatable {
        let want_v = quantity::parse(v).expect("oracle quantity");
        if it.allocatable.get(k) != want_v {
            out.push(format!(
                "allocatable {k}: got {} want {v}",
                it.allocatable.get(k)
            ));
        }
    }
    for (k, v) in &it.allocatable.0 {
        if !want.allocatable.contains_key(k) && *v != 0 {
            out.push(format!("allocatable {k}: got {v}, Karpenter has none"));
        }
    }
    for (k, v) in &want.labels {
        if it.labels.get(k) != Some(v) {
            out.push(format!("label {k}: got {:?} want {v:?}", it.labels.get(k)));
        }
    }
    for (k, v) in &it.labels {
        if !want.labels.contains_key(k) {
            out.push(format!("label {k}: got {v:?}, Karpenter has none"));
        }
    }
    out
}

#[test]
fn every_reference_type_matches_karpenter() {
    let reference = reference();
    let specs: BTreeMap<&str, &Ec2Spec> = bundled_specs()
        .expect("bundled")
        .iter()
        .map(|s| (s.name.as_str(), s))
        .collect();
    let (mut ec2_ok, mut ec2_all, mut ref_ok, mut ref_all) = (0, 0, 0, 0);
    let mut failures = Vec::new();
    for (name, want) in &reference.instance_types {
        let Some(spec) = specs.get(name.as_str()) else {
            failures.push(format!("{name}: no generated spec"));
            continue;
        };
        let d = diff(spec, want);
        let from_ec2 = spec.source == SpecSource::Ec2;
        if from_ec2 {
            ec2_all += 1
        } else {
            ref_all += 1
        }
        if d.is_empty() {
            if from_ec2 { ec2_ok += 1 } else { ref_ok += 1 }
        } else {
            failures.extend(d.into_iter().map(|m| format!("{name}: {m}")));
        }
    }
    println!(
        "oracle: {} of {} types match Karpenter (spec from EC2/moto: {ec2_ok}/{ec2_all}; \
         from the Karpenter-reference fallback: {ref_ok}/{ref_all})",
        ec2_ok + ref_ok,
        reference.instance_types.len()
    );
    assert!(
        failures.is_empty(),
        "{} mismatches:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert_eq!(ec2_all + ref_all, reference.instance_types.len());
}
