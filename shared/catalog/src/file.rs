//! The `--catalog` JSON file format (see the plan contract), read and written.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::{Catalog, CatalogError, InstanceType, Offering, Overhead, Resources};

#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct FileCatalog {
    region: String,
    instance_types: Vec<FileInstanceType>,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct FileInstanceType {
    name: String,
    #[serde(default)]
    labels: BTreeMap<String, String>,
    allocatable: BTreeMap<String, String>,
    /// Optional: raw capacity (defaults to `allocatable`), used for NodePool limits.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    capacity: Option<BTreeMap<String, String>>,
    offerings: Vec<Offering>,
    /// Optional: EBS volumes pods may attach to one node of the type (no limit when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    ebs_volume_limit: Option<u32>,
}

/// Parses a catalog file.
pub fn from_json(text: &str) -> Result<Catalog, CatalogError> {
    let f: FileCatalog =
        serde_json::from_str(text).map_err(|e| CatalogError::File(e.to_string()))?;
    let mut instance_types = Vec::with_capacity(f.instance_types.len());
    for it in f.instance_types {
        instance_types.push(from_file_type(it)?);
    }
    Ok(Catalog {
        region: f.region,
        instance_types,
    })
}

fn from_file_type(it: FileInstanceType) -> Result<InstanceType, CatalogError> {
    let wrap = |e: CatalogError| CatalogError::InstanceType {
        name: it.name.clone(),
        message: e.to_string(),
    };
    let allocatable =
        Resources::parse(it.allocatable.iter().map(|(k, v)| (k.as_str(), v.as_str())))
            .map_err(wrap)?;
    let capacity = match &it.capacity {
        Some(c) => {
            Resources::parse(c.iter().map(|(k, v)| (k.as_str(), v.as_str()))).map_err(wrap)?
        }
        None => allocatable.clone(),
    };
    let mut labels = it.labels;
    labels.insert(crate::labels::INSTANCE_TYPE.to_string(), it.name.clone());
    for o in &it.offerings {
        if !o.price.is_finite() || o.price < 0.0 {
            return Err(CatalogError::InstanceType {
                name: it.name.clone(),
                message: format!(
                    "offering {} {}: invalid price {}",
                    o.zone,
                    o.capacity_type.as_str(),
                    o.price
                ),
            });
        }
    }
    Ok(InstanceType {
        name: it.name,
        labels,
        capacity,
        overhead: Overhead::default(),
        allocatable,
        offerings: it.offerings,
        ebs_volume_limit: it.ebs_volume_limit,
    })
}

/// Writes a catalog in the file format (pretty JSON, deterministic order).
pub fn to_json(c: &Catalog) -> String {
    let f = FileCatalog {
        region: c.region.clone(),
        instance_types: c
            .instance_types
            .iter()
            .map(|it| FileInstanceType {
                name: it.name.clone(),
                labels: it.labels.clone(),
                allocatable: it.allocatable.to_strings(),
                capacity: Some(it.capacity.to_strings()),
                offerings: it.offerings.clone(),
                ebs_volume_limit: it.ebs_volume_limit,
            })
            .collect(),
    };
    // Serialising plain maps, strings and finite floats cannot fail.
    serde_json::to_string_pretty(&f).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = r#"{
      "region": "test-region",
      "instanceTypes": [{
        "name": "fake-it-3",
        "labels": {"kubernetes.io/arch": "amd64"},
        "allocatable": {"cpu": "4", "memory": "8Gi", "pods": "40"},
        "offerings": [
          {"zone": "test-zone-1", "capacityType": "spot", "price": 0.21, "available": true},
          {"zone": "test-zone-1", "capacityType": "on-demand", "price": 0.52, "available": false}
        ]
      }]
    }"#;

    #[test]
    fn reads_the_contract_example() {
        let c = from_json(SAMPLE).unwrap();
        assert_eq!(c.region, "test-region");
        let it = &c.instance_types[0];
        assert_eq!(it.labels["node.kubernetes.io/instance-type"], "fake-it-3");
        assert_eq!(it.allocatable.get("cpu"), 4000);
        assert_eq!(it.capacity, it.allocatable);
        assert_eq!(it.cheapest_available().unwrap().price, 0.21);
    }

    #[test]
    fn round_trips() {
        let c = from_json(SAMPLE).unwrap();
        let again = from_json(&to_json(&c)).unwrap();
        assert_eq!(c, again);
    }

    #[test]
    fn names_the_bad_field() {
        let bad = SAMPLE.replace("\"8Gi\"", "\"8Gx\"");
        let e = from_json(&bad).unwrap_err().to_string();
        assert!(e.contains("fake-it-3") && e.contains("8Gx"), "{e}");
    }
}
