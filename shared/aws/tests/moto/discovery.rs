//! Discovery and pricing against moto: allocatable equals the catalog formulas, caching,
//! and the bundled fallbacks.

use std::collections::BTreeMap;

use jiff::{SignedDuration, Timestamp};
use kerf_aws::discovery::{CatalogOrigin, Discovery};
use kerf_aws::pricing;
use kerf_catalog::{Catalog, InstanceType, NodeClassSettings};

use crate::support::moto::fresh;
use crate::support::{REGION, clients, settings, strings};

const TYPES: &[&str] = &[
    "m5.large",
    "m6g.large",
    "c5.4xlarge",
    "g5.xlarge",
    "m5d.large",
    "t3.medium",
];

fn t0() -> Timestamp {
    "2026-01-01T00:00:00Z".parse().expect("time")
}

fn find<'a>(c: &'a Catalog, name: &str) -> &'a InstanceType {
    c.instance_types
        .iter()
        .find(|it| it.name == name)
        .unwrap_or_else(|| panic!("{name} missing"))
}

#[tokio::test]
async fn discovery_allocatable_matches_catalog_formulas() {
    let (_g, moto) = fresh().await;
    let c = clients(&moto.url).await;
    let d = Discovery::new(REGION, strings(TYPES));
    let settings = NodeClassSettings::default();
    let prices = kerf_catalog::bundled::bundled_prices().unwrap();
    let (cat, origin) = d
        .catalog(&c.ec2, t0(), None, prices, &settings)
        .await
        .unwrap();
    assert_eq!(origin, CatalogOrigin::Live);
    assert_eq!(cat.instance_types.len(), TYPES.len());
    let bundled = kerf_catalog::bundled(REGION, &settings).unwrap();
    for name in TYPES {
        let (live, b) = (find(&cat, name), find(&bundled, name));
        assert_eq!(live.capacity, b.capacity, "{name} capacity");
        assert_eq!(live.allocatable, b.allocatable, "{name} allocatable");
        assert_eq!(live.labels, b.labels, "{name} labels");
        assert_eq!(live.offerings, b.offerings, "{name} offerings");
    }
    // Karpenter's published AL2023 numbers.
    let alloc = |n: &str| find(&cat, n).allocatable.to_strings();
    assert_eq!(alloc("m5.large")["cpu"], "1930m");
    assert_eq!(alloc("m5.large")["memory"], "6903Mi");
    assert_eq!(alloc("m5.large")["pods"], "29");
    assert_eq!(alloc("m6g.large")["memory"], "6844Mi");
    assert_eq!(alloc("c5.4xlarge")["cpu"], "15890m");
    assert_eq!(alloc("c5.4xlarge")["memory"], "27381Mi");
    assert_eq!(alloc("g5.xlarge")["nvidia.com/gpu"], "1");
    // A second call within the TTL is served from the cache.
    let later = t0() + SignedDuration::from_hours(1);
    let (_, origin) = d
        .catalog(&c.ec2, later, None, prices, &settings)
        .await
        .unwrap();
    assert_eq!(origin, CatalogOrigin::Cached);
}

#[tokio::test]
async fn discovery_reads_placement_strategies_from_moto() {
    let (_g, moto) = fresh().await;
    let c = clients(&moto.url).await;
    let specs = kerf_aws::discovery::instance_types(&c.ec2, &strings(TYPES))
        .await
        .unwrap();
    let of = |n: &str| specs.iter().find(|s| s.name == n).unwrap();
    let cluster = kerf_catalog::placement::Strategy::Cluster;
    assert_eq!(of("c5.4xlarge").supports_placement(cluster), Some(true));
    assert_eq!(
        of("t3.medium").supports_placement(cluster),
        Some(false),
        "burstable types cannot join a cluster group"
    );
}

#[tokio::test]
async fn discovery_reads_network_cards_and_ena_support_as_the_bundled_specs_hold_them() {
    let (_g, moto) = fresh().await;
    let c = clients(&moto.url).await;
    let names = ["p4d.24xlarge", "c5n.18xlarge", "c4.large", "m5.large"];
    let specs = kerf_aws::discovery::instance_types(&c.ec2, &strings(&names))
        .await
        .unwrap();
    let bundled = kerf_catalog::bundled::bundled_specs().unwrap();
    let live = |n: &str| {
        specs.iter().find(|s| s.name == n).unwrap_or_else(|| {
            panic!(
                "{n} not among {:?}",
                specs.iter().map(|s| &s.name).collect::<Vec<_>>()
            )
        })
    };
    for n in names {
        let b = bundled.iter().find(|s| s.name == n).unwrap();
        assert_eq!(live(n).network_cards, b.network_cards, "{n}");
        assert_eq!(live(n).ena_support, b.ena_support, "{n}");
    }
    assert_eq!(live("p4d.24xlarge").network_cards, [15, 15, 15, 15]);
    assert_eq!(
        live("c4.large").ena_support,
        Some(kerf_catalog::network::EnaSupport::Unsupported)
    );
}

#[tokio::test]
async fn discovery_falls_back_to_the_bundled_catalog_when_unreachable() {
    let s = kerf_aws::AwsSettings {
        max_attempts: 1,
        ..settings("http://127.0.0.1:9")
    };
    let c = kerf_aws::Clients::load(&s).await;
    let d = Discovery::new(REGION, strings(TYPES));
    let settings = NodeClassSettings::default();
    let prices = kerf_catalog::bundled::bundled_prices().unwrap();
    let (cat, origin) = d
        .catalog(&c.ec2, t0(), None, prices, &settings)
        .await
        .unwrap();
    assert_eq!(origin, CatalogOrigin::Bundled);
    assert_eq!(cat.instance_types.len(), TYPES.len());
}

#[tokio::test]
async fn pricing_falls_back_to_the_bundled_table_against_moto() {
    let (_g, moto) = fresh().await;
    let c = clients(&moto.url).await;
    let types = strings(&["m5.large", "c5.large"]);
    let p = pricing::refresh(&c.pricing, &c.ec2, REGION, &types, t0()).await;
    // moto has no Pricing API: on-demand comes from the bundled table.
    assert!(p.on_demand_fallback);
    assert_eq!(
        p.on_demand.get("m5.large"),
        pricing::bundled_on_demand().get("m5.large")
    );
    // moto's spot history is a flat placeholder, one row per offered zone.
    let spot = p.spot.expect("spot prices");
    assert_eq!(
        spot.get(&("m5.large".to_string(), "us-west-2a".to_string())),
        Some(&0.00001)
    );
    let zones: Vec<_> = spot.keys().filter(|(t, _)| t == "c5.large").collect();
    assert!(zones.len() >= 3, "{zones:?}");
    let _: BTreeMap<_, _> = p.on_demand;
}

#[tokio::test]
async fn price_book_caches_and_retries_partial_refreshes() {
    let (_g, moto) = fresh().await;
    let proxy = crate::support::proxy::Proxy::start(&moto.url).await;
    let c = clients(&proxy.url).await;
    let book = kerf_aws::price_book::PriceBook::new(REGION, strings(&["m5.large"]));
    let first = book.prices(&c.pricing, &c.ec2, t0()).await;
    assert!(first.on_demand_fallback, "moto has no Pricing API");
    let calls = proxy.count("DescribeSpotPriceHistory");
    let soon = t0() + SignedDuration::from_mins(1);
    assert_eq!(book.prices(&c.pricing, &c.ec2, soon).await, first);
    assert_eq!(
        proxy.count("DescribeSpotPriceHistory"),
        calls,
        "served from the cache"
    );
    let later = t0() + kerf_aws::price_book::RETRY_AFTER;
    book.prices(&c.pricing, &c.ec2, later).await;
    assert_eq!(
        proxy.count("DescribeSpotPriceHistory"),
        calls + 1,
        "partial data is retried"
    );
}
