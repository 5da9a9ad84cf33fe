//! The catalog compiled into the binary: generated EC2 specs, the us-east-1 on-demand table
//! and per-region zone offerings (`data/*.json`, written by `scripts/gen-catalog.py`),
//! parsed once on first use.

use std::collections::{BTreeMap, HashMap};
use std::sync::OnceLock;

use serde::Deserialize;

use crate::build;
use crate::pricing::StaticPrices;
use crate::regions::{REGIONS, ZONE_FILES};
use crate::settings::NodeClassSettings;
use crate::spec::Ec2Spec;
use crate::{Catalog, CatalogError};

const SPECS_JSON: &str = include_str!("../data/specs.json");
const PRICES_JSON: &str = include_str!("../data/prices.json");

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct SpecsFile {
    instance_types: Vec<Ec2Spec>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct PricesFile {
    on_demand: BTreeMap<String, f64>,
}

/// One region's zones and, per instance type, a bitmask of the zones offering it
/// (bit i = `zones[i]`). Type names borrow from the embedded text.
#[derive(Deserialize)]
struct RegionZones {
    region: String,
    zones: Vec<String>,
    #[serde(borrow)]
    offerings: HashMap<&'static str, u32>,
}

impl RegionZones {
    fn zones_of(&self, instance_type: &str) -> Option<Vec<String>> {
        let mask = *self.offerings.get(instance_type)?;
        let picked = self
            .zones
            .iter()
            .enumerate()
            .filter(|(i, _)| *i < 32 && mask & (1 << i) != 0);
        Some(picked.map(|(_, z)| z.clone()).collect())
    }
}

struct Data {
    specs: Vec<Ec2Spec>,
    prices: StaticPrices,
}

fn parse() -> Result<Data, String> {
    let specs: SpecsFile =
        serde_json::from_str(SPECS_JSON).map_err(|e| format!("specs.json: {e}"))?;
    let prices: PricesFile =
        serde_json::from_str(PRICES_JSON).map_err(|e| format!("prices.json: {e}"))?;
    Ok(Data {
        specs: specs.instance_types,
        prices: StaticPrices::new(prices.on_demand),
    })
}

fn data() -> Result<&'static Data, CatalogError> {
    static DATA: OnceLock<Result<Data, String>> = OnceLock::new();
    DATA.get_or_init(parse)
        .as_ref()
        .map_err(|e| CatalogError::File(format!("bundled catalog data: {e}")))
}

fn parse_region(i: usize) -> Result<RegionZones, String> {
    let text: &'static str = ZONE_FILES.get(i).copied().unwrap_or_default();
    let r: RegionZones = serde_json::from_str(text).map_err(|e| format!("zones: {e}"))?;
    match REGIONS.get(i) {
        Some(name) if *name == r.region => Ok(r),
        _ => Err(format!("zone file {i} holds region {}", r.region)),
    }
}

fn region(name: &str) -> Result<&'static RegionZones, CatalogError> {
    static PARSED: [OnceLock<Result<RegionZones, String>>; REGIONS.len()] =
        [const { OnceLock::new() }; REGIONS.len()];
    let i = REGIONS
        .iter()
        .position(|r| *r == name)
        .ok_or_else(|| CatalogError::UnknownRegion {
            region: name.to_string(),
            known: REGIONS.join(", "),
        })?;
    let cell = PARSED
        .get(i)
        .ok_or_else(|| CatalogError::File(format!("region slot {i}")))?;
    cell.get_or_init(|| parse_region(i))
        .as_ref()
        .map_err(|e| CatalogError::File(format!("bundled catalog data: {e}")))
}

/// The regions [`bundled`] knows.
pub fn bundled_regions() -> &'static [&'static str] {
    &REGIONS
}

/// Every bundled EC2 spec, sorted by name (including types no bundled region offers).
pub fn bundled_specs() -> Result<&'static [Ec2Spec], CatalogError> {
    Ok(&data()?.specs)
}

/// The bundled on-demand table (us-east-1 prices, used for every region) and spot estimate.
pub fn bundled_prices() -> Result<&'static StaticPrices, CatalogError> {
    Ok(&data()?.prices)
}

/// The zones of a bundled region, sorted.
pub fn bundled_zones(region_name: &str) -> Result<&'static [String], CatalogError> {
    Ok(&region(region_name)?.zones)
}

/// The zones of a bundled region that offer `instance_type` (empty if none).
pub fn bundled_type_zones(
    region_name: &str,
    instance_type: &str,
) -> Result<Vec<String>, CatalogError> {
    Ok(region(region_name)?
        .zones_of(instance_type)
        .unwrap_or_default())
}

/// The bundled catalog of a region under a nodeclass's settings: every type offered in at
/// least one of its zones, sorted by name, with one offering per offering zone × supported
/// capacity type (prices: us-east-1 on-demand table, spot ESTIMATE; see [`crate::pricing`]).
pub fn bundled(region_name: &str, settings: &NodeClassSettings) -> Result<Catalog, CatalogError> {
    let d = data()?;
    let r = region(region_name)?;
    let mut instance_types = Vec::with_capacity(r.offerings.len());
    for spec in &d.specs {
        let Some(zones) = r.zones_of(&spec.name) else {
            continue;
        };
        instance_types.push(build::instance_type(spec, &zones, &d.prices, settings)?);
    }
    Ok(Catalog {
        region: region_name.to_string(),
        instance_types,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_data_file_says_it_is_generated() {
        for text in [SPECS_JSON, PRICES_JSON].iter().chain(ZONE_FILES.iter()) {
            assert!(text.starts_with(r#"{"_generated":"GENERATED by scripts/gen-catalog.py"#));
        }
    }

    #[test]
    fn zone_files_match_their_slots() {
        for (i, name) in REGIONS.iter().enumerate() {
            assert_eq!(parse_region(i).unwrap().region, *name);
        }
        assert!(REGIONS.windows(2).all(|w| w[0] < w[1]));
    }
}
