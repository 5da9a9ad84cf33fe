//! The instance-types file Karpenter's KWOK provider reads (`INSTANCE_TYPES_FILE_PATH`),
//! generated from Kerf's catalog so that both sides choose from the same offerings: the same
//! types, zones, capacity types and prices (spot included), and the same allocatable.
//!
//! The KWOK provider subtracts a fixed overhead (100m CPU, 10Mi memory) from the resources it
//! is given and nothing else, so each type's resources are Kerf's allocatable plus that
//! overhead: a node then offers pods exactly what Kerf's catalog says it offers. Every
//! instance-type label Kerf's catalog carries (`karpenter.k8s.aws/instance-category`, …) is
//! written as a requirement of each offering, so Karpenter treats those keys as well known,
//! NodePool requirements on them select the same types on both sides, and its nodes carry
//! them as labels.

use serde_json::{Value, json};

use kerf_catalog::{Catalog, InstanceType, Offering, quantity};

/// The overhead the KWOK provider subtracts from every type's resources.
const KWOK_CPU_MILLIS: i64 = 100;
const KWOK_MEMORY_BYTES: i64 = 10 * 1024 * 1024;

/// Requirements the KWOK provider derives itself, kept out of the offerings.
const DERIVED: [&str; 3] = [
    kerf_labels::INSTANCE_TYPE,
    kerf_labels::ARCH,
    kerf_labels::OS,
];

/// A single-valued `In` requirement.
fn is(key: &str, value: &str) -> Value {
    json!({"key": key, "operator": "In", "values": [value]})
}

fn offering(it: &InstanceType, o: &Offering) -> Value {
    let mut reqs = vec![
        is(kerf_labels::CAPACITY_TYPE, o.capacity_type.as_str()),
        is(kerf_labels::ZONE, &o.zone),
    ];
    reqs.extend(
        it.labels
            .iter()
            .filter(|(k, _)| !DERIVED.contains(&k.as_str()))
            .map(|(k, v)| is(k, v)),
    );
    json!({"Price": o.price, "Available": true, "Requirements": reqs})
}

/// Kerf's allocatable plus the KWOK provider's overhead, as Kubernetes quantities.
fn resources(it: &InstanceType) -> Value {
    let mut out = serde_json::Map::new();
    for (name, v) in &it.allocatable.0 {
        let extra = match name.as_str() {
            "cpu" => KWOK_CPU_MILLIS,
            "memory" => KWOK_MEMORY_BYTES * 1000,
            _ => 0,
        };
        let f = kerf_catalog::resources::format_for(name);
        out.insert(name.clone(), json!(quantity::format(v + extra, f)));
    }
    Value::Object(out)
}

/// One instance type as the KWOK provider reads it; `None` for a type with no offering.
fn instance_type(it: &InstanceType) -> Option<Value> {
    let offerings: Vec<Value> = it
        .offerings
        .iter()
        .filter(|o| o.available)
        .map(|o| offering(it, o))
        .collect();
    if offerings.is_empty() {
        return None;
    }
    let label = |k: &str| it.labels.get(k).cloned().unwrap_or_default();
    Some(json!({
        "name": it.name,
        "offerings": offerings,
        "architecture": label(kerf_labels::ARCH),
        "operatingSystems": [label(kerf_labels::OS)],
        "resources": resources(it),
    }))
}

/// The whole file for `catalog`: every type with at least one available offering.
pub fn instance_types(catalog: &Catalog) -> Value {
    Value::Array(
        catalog
            .instance_types
            .iter()
            .filter_map(instance_type)
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use kerf_catalog::settings::NodeClassSettings;

    fn catalog() -> Catalog {
        kerf_catalog::bundled("us-west-2", &NodeClassSettings::default()).unwrap()
    }

    #[test]
    fn every_offering_keeps_its_price_and_the_types_labels() {
        let c = catalog();
        let file = instance_types(&c);
        let types = file.as_array().unwrap();
        let offered = c
            .instance_types
            .iter()
            .filter(|t| t.offerings.iter().any(|o| o.available));
        assert_eq!(types.len(), offered.count());
        assert!(types.len() > 400, "{}", types.len());
        let it = c
            .instance_types
            .iter()
            .find(|t| t.name == "c6a.2xlarge")
            .unwrap();
        let out = types.iter().find(|t| t["name"] == "c6a.2xlarge").unwrap();
        assert_eq!(out["architecture"], "amd64");
        assert_eq!(out["operatingSystems"], json!(["linux"]));
        let offs = out["offerings"].as_array().unwrap();
        assert_eq!(offs.len(), it.offerings.len());
        for (o, want) in offs.iter().zip(&it.offerings) {
            assert_eq!(o["Price"].as_f64(), Some(want.price));
            let reqs = o["Requirements"].as_array().unwrap();
            assert!(reqs.contains(&is("topology.kubernetes.io/zone", &want.zone)));
            assert!(reqs.contains(&is(
                "karpenter.sh/capacity-type",
                want.capacity_type.as_str()
            )));
            assert!(reqs.contains(&is("karpenter.k8s.aws/instance-category", "c")));
            assert!(
                !reqs
                    .iter()
                    .any(|r| r["key"] == "node.kubernetes.io/instance-type")
            );
        }
    }

    #[test]
    fn resources_are_kerfs_allocatable_plus_the_providers_overhead() {
        let c = catalog();
        let it = c
            .instance_types
            .iter()
            .find(|t| t.name == "m5.large")
            .unwrap();
        let out = instance_type(it).unwrap();
        let cpu = quantity::parse(out["resources"]["cpu"].as_str().unwrap()).unwrap();
        let mem = quantity::parse(out["resources"]["memory"].as_str().unwrap()).unwrap();
        let pods = quantity::parse(out["resources"]["pods"].as_str().unwrap()).unwrap();
        assert_eq!(cpu - KWOK_CPU_MILLIS, it.allocatable.get("cpu"));
        assert_eq!(mem - KWOK_MEMORY_BYTES * 1000, it.allocatable.get("memory"));
        assert_eq!(pods, it.allocatable.get("pods"));
    }
}
