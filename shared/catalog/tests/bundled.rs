//! The bundled catalog: every region loads, zones are right, every offered type has
//! offerings priced from the us-east-1 table and the deterministic spot estimate.

use std::collections::BTreeSet;

use kerf_catalog::bundled::{bundled_prices, bundled_specs, bundled_type_zones, bundled_zones};
use kerf_catalog::pricing::{PriceSource, SPOT_FACTOR_MAX, SPOT_FACTOR_MIN};
use kerf_catalog::{
    AmiFamily, CapacityType, CatalogError, NodeClassSettings, SpecSource, bundled, bundled_regions,
};

fn zones(region: &str, letters: &str) -> Vec<String> {
    letters.chars().map(|c| format!("{region}{c}")).collect()
}

#[test]
fn regions_and_zones() {
    let regions = bundled_regions();
    assert_eq!(regions.len(), 30, "every commercial region: {regions:?}");
    assert!(regions.windows(2).all(|w| w[0] < w[1]), "sorted");
    for r in [
        "eu-central-1",
        "ap-northeast-1",
        "sa-east-1",
        "ca-central-1",
        "ap-southeast-2",
    ] {
        assert!(regions.contains(&r), "{r} bundled");
    }
    assert!(
        !regions
            .iter()
            .any(|r| r.starts_with("us-gov-") || r.starts_with("cn-")),
        "commercial partition only"
    );
    assert_eq!(
        bundled_zones("eu-central-1").unwrap(),
        zones("eu-central-1", "abc")
    );
    assert_eq!(
        bundled_zones("ap-northeast-1").unwrap(),
        zones("ap-northeast-1", "acd")
    );
    assert_eq!(
        bundled_zones("us-east-1").unwrap(),
        zones("us-east-1", "abcdef")
    );
    assert_eq!(
        bundled_zones("us-east-2").unwrap(),
        zones("us-east-2", "abc")
    );
    assert_eq!(
        bundled_zones("us-west-2").unwrap(),
        zones("us-west-2", "abcd")
    );
    assert_eq!(
        bundled_zones("eu-west-1").unwrap(),
        zones("eu-west-1", "abc")
    );
    assert_eq!(
        bundled_zones("ap-northeast-2").unwrap(),
        zones("ap-northeast-2", "abcd")
    );
}

#[test]
fn every_region_loads_and_every_type_has_offerings() {
    let settings = NodeClassSettings::default();
    for region in bundled_regions() {
        let c = bundled(region, &settings).unwrap();
        assert_eq!(c.region, *region);
        // The smallest regions (il-central-1) offer fewer than 300 types; the large ones more
        // than 500.
        let least = if [
            "us-east-1",
            "us-east-2",
            "us-west-2",
            "eu-west-1",
            "ap-northeast-2",
        ]
        .contains(region)
        {
            500
        } else {
            250
        };
        assert!(
            c.instance_types.len() > least,
            "{region}: {}",
            c.instance_types.len()
        );
        let region_zones: BTreeSet<&String> = bundled_zones(region).unwrap().iter().collect();
        let names: Vec<&str> = c.instance_types.iter().map(|t| t.name.as_str()).collect();
        assert!(
            names.windows(2).all(|w| w[0] < w[1]),
            "{region}: sorted, unique"
        );
        for it in &c.instance_types {
            assert!(
                !it.offerings.is_empty(),
                "{region} {} has no offerings",
                it.name
            );
            let zs = bundled_type_zones(region, &it.name).unwrap();
            for o in &it.offerings {
                assert!(
                    region_zones.contains(&o.zone),
                    "{region} {} zone {}",
                    it.name,
                    o.zone
                );
                assert!(zs.contains(&o.zone));
                let priced = bundled_prices().unwrap().on_demand(&it.name).is_some();
                assert_eq!(
                    o.available,
                    priced && !it.name.starts_with("a1."),
                    "{region} {}",
                    it.name
                );
                assert!(o.price.is_finite() && o.price >= 0.0);
                assert!(
                    !o.available || o.price > 0.0,
                    "available offerings have a price"
                );
            }
        }
    }
}

#[test]
fn m5_large_in_us_east_1() {
    let c = bundled("us-east-1", &NodeClassSettings::default()).unwrap();
    let it = c
        .instance_types
        .iter()
        .find(|t| t.name == "m5.large")
        .unwrap();
    assert_eq!(it.allocatable.get("cpu"), 1930);
    let od: Vec<_> = it
        .offerings
        .iter()
        .filter(|o| o.capacity_type == CapacityType::OnDemand)
        .collect();
    assert_eq!(
        od.len(),
        bundled_type_zones("us-east-1", "m5.large").unwrap().len()
    );
    assert!(od.iter().all(|o| o.available && o.price == 0.096));
    for o in it
        .offerings
        .iter()
        .filter(|o| o.capacity_type == CapacityType::Spot)
    {
        assert!(o.available);
        assert!(
            o.price >= 0.096 * SPOT_FACTOR_MIN - 1e-6 && o.price <= 0.096 * SPOT_FACTOR_MAX + 1e-6
        );
    }
}

#[test]
fn other_regions_reuse_us_east_1_prices_and_spot_is_deterministic() {
    let s = NodeClassSettings::default();
    let a = bundled("eu-west-1", &s).unwrap();
    let b = bundled("eu-west-1", &s).unwrap();
    assert_eq!(a, b);
    let it = a
        .instance_types
        .iter()
        .find(|t| t.name == "c5.xlarge")
        .unwrap();
    let od = it
        .offerings
        .iter()
        .find(|o| o.capacity_type == CapacityType::OnDemand)
        .unwrap();
    assert_eq!(
        Some(od.price),
        bundled_prices().unwrap().on_demand("c5.xlarge")
    );
}

#[test]
fn unknown_region_is_an_error_naming_the_known_ones() {
    match bundled("mars-north-1", &NodeClassSettings::default()) {
        Err(e @ CatalogError::UnknownRegion { .. }) => assert!(e.to_string().contains("us-west-2")),
        other => panic!("{other:?}"),
    }
}

#[test]
fn windows_catalog_has_no_available_arm64_offerings() {
    let c = bundled(
        "us-west-2",
        &NodeClassSettings::for_family(AmiFamily::Windows2022),
    )
    .unwrap();
    let graviton = c
        .instance_types
        .iter()
        .find(|t| t.name == "m6g.large")
        .unwrap();
    assert!(graviton.offerings.iter().all(|o| !o.available));
    let m5 = c
        .instance_types
        .iter()
        .find(|t| t.name == "m5.large")
        .unwrap();
    assert_eq!(m5.allocatable.get("pods"), 110_000);
}

#[test]
fn spec_sources_are_recorded() {
    let specs = bundled_specs().unwrap();
    let ec2 = specs.iter().filter(|s| s.source == SpecSource::Ec2).count();
    let fallback = specs
        .iter()
        .filter(|s| s.source == SpecSource::KarpenterReference)
        .count();
    println!(
        "bundled specs: {ec2} from EC2 (moto), {fallback} from the Karpenter-reference fallback"
    );
    assert_eq!(ec2 + fallback, specs.len());
    assert!(ec2 > 1000 && fallback > 0);
    assert!(
        specs
            .iter()
            .filter(|s| s.source == SpecSource::KarpenterReference)
            .all(|s| s.eni_limited_pods.is_some() && s.max_enis.is_none())
    );
}

#[test]
fn table_lists_every_type_with_allocatable_and_prices() {
    let c = bundled("us-east-1", &NodeClassSettings::default()).unwrap();
    let t = kerf_catalog::table::render(&c);
    assert_eq!(t.lines().count(), c.instance_types.len() + 1);
    let row = t.lines().find(|l| l.starts_with("m5.large ")).unwrap();
    for cell in ["1930m", "6903Mi", "29", "$0.0960"] {
        assert!(row.split_whitespace().any(|c| c == cell), "{cell} in {row}");
    }
}
