//! `kerf catalog --from-aws` against moto: the region's instance types and zones come from
//! EC2 as the functions read them, the prices AWS does not give are filled in and said, and
//! an unreachable AWS is an error naming the call, never a silent fallback.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers outside #[test] fns

use std::collections::BTreeSet;
use std::time::Duration;

use kerf_aws::config::AwsSettings;
use kerf_catalog::{Catalog, NodeClassSettings};
use kerf_cli::error::CliError;
use kerf_cli::from_aws::fetch;

fn zones(c: &Catalog, name: &str) -> BTreeSet<String> {
    c.instance_types
        .iter()
        .find(|t| t.name == name)
        .map(|t| t.offerings.iter().map(|o| o.zone.clone()).collect())
        .unwrap_or_default()
}

#[tokio::test]
async fn the_catalog_of_a_region_is_read_from_ec2() {
    let (_guard, moto) = kerf_e2e::moto::fresh().await;
    let aws = AwsSettings::local("eu-central-1", &moto.url);
    let f = fetch(&aws, &NodeClassSettings::default(), jiff::Timestamp::now())
        .await
        .unwrap();
    let c = &f.catalog;
    assert_eq!(c.region, "eu-central-1");
    assert!(c.instance_types.len() > 500, "{}", c.instance_types.len());
    for t in &c.instance_types {
        assert!(
            t.offerings
                .iter()
                .all(|o| o.zone.starts_with("eu-central-1")),
            "{}: offered outside the region",
            t.name
        );
    }
    // moto serves the offerings the bundled catalog was generated from: the same zones.
    let bundled = kerf_catalog::bundled("eu-central-1", &NodeClassSettings::default()).unwrap();
    for name in ["m5.large", "c6g.xlarge", "r7i.2xlarge"] {
        assert_eq!(zones(c, name), zones(&bundled, name), "{name}");
        assert!(!zones(c, name).is_empty(), "{name} offered");
    }
    // moto has no Pricing API: on-demand prices are the bundled list prices, and said so.
    assert!(
        f.warnings
            .iter()
            .any(|w| w.contains("on-demand prices") && w.contains("bundled")),
        "{:?}",
        f.warnings
    );
    let m5 = c
        .instance_types
        .iter()
        .find(|t| t.name == "m5.large")
        .unwrap();
    let od = m5
        .offerings
        .iter()
        .find(|o| o.capacity_type == kerf_catalog::CapacityType::OnDemand)
        .unwrap();
    assert_eq!(od.price, 0.096);
    // The file `kerf plan --catalog` reads round-trips.
    let text = kerf_catalog::file::to_json(c);
    let back = kerf_catalog::file::from_json(&text).unwrap();
    assert_eq!(back.instance_types.len(), c.instance_types.len());
}

#[tokio::test]
async fn unreachable_aws_is_an_error_naming_the_call() {
    let mut aws = AwsSettings::local("eu-central-1", "http://127.0.0.1:1");
    aws.max_attempts = 1;
    aws.operation_timeout = Duration::from_secs(5);
    let e = fetch(&aws, &NodeClassSettings::default(), jiff::Timestamp::now())
        .await
        .unwrap_err();
    assert!(matches!(e, CliError::Aws(_)), "{e:?}");
    assert_eq!(e.exit_code(), 1);
    assert!(e.to_string().contains("reading the instance types"), "{e}");
    assert!(e.to_string().contains("DescribeInstanceType"), "{e}");
}
