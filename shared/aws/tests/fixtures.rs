//! Recorded-format AWS responses (tests/fixtures/aws/) and sample events (events/) parsed
//! through the real SDK deserialisers: the fault proxy serves the fixture, no moto needed.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "support/mod.rs"]
mod support;

use std::collections::BTreeMap;

use kerf_aws::events::{self, Interruption};
use kerf_aws::fleet::{self, LaunchRequest};
use kerf_aws::network::Subnet;
use kerf_aws::{OfferingKey, pricing};
use kerf_catalog::CapacityType;
use kerf_control::ports::{HealthCategory, Unhealthy};
use support::proxy::{Fault, Proxy};
use support::{clients, repo_root};

fn fixture(name: &str) -> String {
    let p = repo_root().join("tests/fixtures/aws").join(name);
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

fn serve(proxy: &Proxy, action: &str, content_type: &str, body: String, times: usize) {
    let fault = Fault::Respond {
        status: 200,
        content_type: content_type.into(),
        body,
    };
    proxy.inject(action, fault, times);
}

#[tokio::test]
async fn pricing_get_products_fixture_parses() {
    let proxy = Proxy::start("http://127.0.0.1:9").await;
    let c = clients(&proxy.url).await;
    serve(
        &proxy,
        "GetProducts",
        "application/x-amz-json-1.1",
        fixture("pricing-get-products.json"),
        2,
    );
    let od = pricing::on_demand_prices(&c.pricing, "us-west-2")
        .await
        .unwrap();
    let expected = BTreeMap::from([
        ("c5.large".to_string(), 0.085),
        ("m5.large".to_string(), 0.096),
        ("m6g.large".to_string(), 0.077),
    ]);
    assert_eq!(od, expected, "zero prices are skipped");
    assert_eq!(proxy.count("GetProducts"), 2, "shared + bare-metal queries");
}

#[tokio::test]
async fn spot_price_history_fixture_keeps_the_latest_price() {
    let proxy = Proxy::start("http://127.0.0.1:9").await;
    let c = clients(&proxy.url).await;
    serve(
        &proxy,
        "DescribeSpotPriceHistory",
        "text/xml",
        fixture("describe-spot-price-history.xml"),
        1,
    );
    let now = "2026-01-01T10:30:00Z".parse().unwrap();
    let spot = pricing::spot_prices(&c.ec2, &[], now).await.unwrap();
    let key = |t: &str, z: &str| (t.to_string(), z.to_string());
    assert_eq!(spot.len(), 3);
    assert_eq!(spot[&key("m5.large", "us-west-2a")], 0.0359);
    assert_eq!(spot[&key("m5.large", "us-west-2b")], 0.0381);
    assert_eq!(spot[&key("c5.large", "us-west-2c")], 0.031);
}

#[tokio::test]
async fn create_fleet_fixture_yields_instance_and_capacity_errors() {
    let proxy = Proxy::start("http://127.0.0.1:9").await;
    let c = clients(&proxy.url).await;
    serve(
        &proxy,
        "CreateFleet",
        "text/xml",
        fixture("create-fleet-partial-ice.xml"),
        1,
    );
    let subnet = |id: &str, zone: &str| Subnet {
        id: id.into(),
        zone: zone.into(),
        zone_id: String::new(),
        available_ips: 100,
    };
    let lt = "kerf.k8s.aws/0123456789abcdef";
    let req = LaunchRequest {
        cluster: "c".into(),
        nodeclaim_name: "nc".into(),
        nodeclaim_uid: "uid".into(),
        nodepool: "default".into(),
        nodeclass: "default".into(),
        capacity_type: CapacityType::Spot,
        options: vec![
            fleet::LaunchOption {
                instance_type: "m5.large".into(),
                zone: "us-west-2a".into(),
                price: 0.03,
                launch_template: lt.into(),
                reservation: None,
            },
            fleet::LaunchOption {
                instance_type: "m5.large".into(),
                zone: "us-west-2b".into(),
                price: 0.04,
                launch_template: lt.into(),
                reservation: None,
            },
        ],
        subnets: BTreeMap::from([
            (
                "us-west-2a".to_string(),
                subnet("subnet-0aaa1111", "us-west-2a"),
            ),
            (
                "us-west-2b".to_string(),
                subnet("subnet-0bbb2222", "us-west-2b"),
            ),
        ]),
        tags: BTreeMap::new(),
        prioritized: false,
        placement_group: None,
    };
    let out = fleet::create_fleet(&c.ec2, &req)
        .unwrap()
        .send()
        .await
        .unwrap();
    let l = fleet::interpret(&out, &req).unwrap();
    assert_eq!(l.instance_id, "i-0f1e2d3c4b5a69788");
    assert_eq!(l.provider_id, "aws:///us-west-2b/i-0f1e2d3c4b5a69788");
    assert_eq!(
        l.unavailable,
        vec![
            OfferingKey::new(CapacityType::Spot, "c5.large", "us-west-2a"),
            OfferingKey::new(CapacityType::Spot, "m5.large", "us-west-2a"),
        ]
    );
}

#[tokio::test]
async fn describe_instance_status_fixture_yields_failed_checks_and_pending_events() {
    let proxy = Proxy::start("http://127.0.0.1:9").await;
    let c = clients(&proxy.url).await;
    let body = fixture("describe-instance-status.xml");
    serve(&proxy, "DescribeInstanceStatus", "text/xml", body, 3);
    let found = kerf_aws::health::unhealthy(&c.ec2).await.unwrap();
    assert_eq!(
        proxy.count("DescribeInstanceStatus"),
        3,
        "one call per signal: filters are ANDed"
    );
    let at = |t: &str| Some(t.parse::<jiff::Timestamp>().unwrap());
    let want = vec![
        Unhealthy {
            instance_id: "i-0aaa1111aaaa1111a".into(),
            category: HealthCategory::InstanceStatus,
            since: at("2026-01-01T10:01:00Z"),
        },
        Unhealthy {
            instance_id: "i-0bbb2222bbbb2222b".into(),
            category: HealthCategory::SystemStatus,
            since: at("2026-01-01T10:03:30Z"),
        },
        Unhealthy {
            instance_id: "i-0ccc3333cccc3333c".into(),
            category: HealthCategory::EventStatus,
            since: None,
        },
    ];
    assert_eq!(
        found, want,
        "the same response thrice is merged once; a completed event and initializing checks \
         are healthy"
    );
}

#[test]
fn sample_events_parse() {
    let dir = repo_root().join("events");
    let parse = |name: &str| {
        let body = std::fs::read_to_string(dir.join(name)).unwrap();
        events::parse(&body).unwrap_or_else(|e| panic!("{name}: {e}"))
    };
    let spot = parse("spot-interruption.json");
    assert_eq!(spot.envelope.account.as_deref(), Some("123456789012"));
    assert_eq!(spot.interruption.kind(), "spot_interrupted");
    let moto = parse("spot-interruption-moto.json");
    assert_eq!(moto.envelope.account, None);
    assert_eq!(
        moto.interruption.instance_ids(),
        vec!["i-b8ca42e28c3fc4a6b"]
    );
    assert_eq!(
        parse("rebalance-recommendation.json").interruption,
        Interruption::RebalanceRecommendation {
            instance_id: "i-0b662ef9931388ba0".into()
        }
    );
    assert_eq!(
        parse("instance-state-change.json").interruption.kind(),
        "instance_terminated"
    );
    let health = parse("scheduled-change.json").interruption;
    assert_eq!(health.kind(), "scheduled_change");
    assert_eq!(health.instance_ids(), vec!["i-12345678", "i-87654321"]);
    assert_eq!(
        parse("capacity-reservation-interruption.json")
            .interruption
            .kind(),
        "capacity_reservation_interrupted"
    );
}
