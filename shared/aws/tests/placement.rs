//! Placement groups against recorded-format EC2 responses (moto 5.2.1 has no placement
//! groups: no `DescribePlacementGroups`, no `Placement.PartitionNumber` on instances; its
//! `DescribeInstanceTypes` does carry `PlacementGroupInfo`, checked in `moto/discovery.rs`):
//! the fault proxy serves the fixture and records the request, so both the query sent and the
//! reading of the answer are checked.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "support/mod.rs"]
mod support;

use jiff::{SignedDuration, Timestamp};
use kerf_api::v1::ConditionStatus;
use kerf_api::v1::ec2nodeclass_types::PlacementGroupSelector;
use kerf_aws::cloud::placement_condition;
use kerf_aws::launch_template::{self, LaunchTemplateSpec, MetadataOptions, Placement};
use kerf_aws::placement_group::{self, PlacementGroups, Query, Resolution};
use kerf_catalog::placement::Strategy;
use support::clients;
use support::proxy::Proxy;
use support::recorded::serve;

const PG: &str = "pg-0a1b2c3d4e5f60718";

fn has(form: &[(String, String)], key: &str, value: &str) -> bool {
    form.iter().any(|(k, v)| k == key && v == value)
}

fn t0() -> Timestamp {
    "2026-01-01T00:00:00Z".parse().unwrap()
}

fn by_name(name: &str) -> PlacementGroupSelector {
    PlacementGroupSelector {
        name: Some(name.into()),
        id: None,
    }
}

#[tokio::test]
async fn a_group_is_described_by_id_or_name_among_available_groups() {
    let proxy = Proxy::start("http://127.0.0.1:9").await;
    let c = clients(&proxy.url).await;
    serve(
        &proxy,
        "DescribePlacementGroups",
        "describe-placement-groups.xml",
        2,
    );
    let pg = placement_group::describe(&c.ec2, &Query::Id(PG.into()))
        .await
        .unwrap()
        .expect("found");
    assert_eq!((pg.id.as_str(), pg.name.as_str()), (PG, "kafka"));
    assert_eq!(
        (pg.strategy, pg.partitions()),
        (Strategy::Partition, vec![1, 2, 3])
    );
    placement_group::describe(&c.ec2, &Query::Name("kafka".into()))
        .await
        .unwrap();
    let forms = proxy.forms("DescribePlacementGroups");
    assert!(has(&forms[0], "GroupId.1", PG), "{:?}", forms[0]);
    assert!(has(&forms[1], "GroupName.1", "kafka"), "{:?}", forms[1]);
    for f in &forms {
        assert!(has(f, "Filter.1.Name", "state") && has(f, "Filter.1.Value.1", "available"));
    }
}

#[tokio::test]
async fn nothing_available_or_an_unknown_name_is_not_found() {
    let proxy = Proxy::start("http://127.0.0.1:9").await;
    let c = clients(&proxy.url).await;
    serve(
        &proxy,
        "DescribePlacementGroups",
        "describe-placement-groups-empty.xml",
        1,
    );
    let groups = PlacementGroups::new();
    let r = groups.resolve(&c.ec2, Some(&by_name("kafka")), t0()).await;
    assert_eq!(r, Resolution::NotFound(Query::Name("kafka".into())));
    let cond = placement_condition(&r);
    assert_eq!(
        (cond.status, cond.reason.as_str()),
        (ConditionStatus::False, "PlacementGroupNotFound")
    );
    proxy.error(
        "DescribePlacementGroups",
        400,
        "InvalidPlacementGroup.Unknown",
        1,
    );
    let later = t0() + SignedDuration::from_mins(2);
    let r = groups.resolve(&c.ec2, Some(&by_name("kafka")), later).await;
    assert!(matches!(r, Resolution::NotFound(_)), "{r:?}");
    let none = groups.resolve(&c.ec2, None, later).await;
    assert_eq!(none, Resolution::NoSelector);
    assert_eq!(
        proxy.count("DescribePlacementGroups"),
        2,
        "no selector, no call"
    );
}

#[tokio::test]
async fn answers_are_cached_and_a_failure_keeps_the_last_group() {
    let proxy = Proxy::start("http://127.0.0.1:9").await;
    let c = clients(&proxy.url).await;
    serve(
        &proxy,
        "DescribePlacementGroups",
        "describe-placement-groups.xml",
        1,
    );
    let groups = PlacementGroups::new();
    let first = groups.resolve(&c.ec2, Some(&by_name("kafka")), t0()).await;
    assert!(matches!(&first, Resolution::Found(pg) if pg.id == PG));
    let again = groups
        .resolve(
            &c.ec2,
            Some(&by_name("kafka")),
            t0() + SignedDuration::from_secs(30),
        )
        .await;
    assert_eq!(again, first);
    assert_eq!(
        proxy.count("DescribePlacementGroups"),
        1,
        "cached for a minute"
    );
    proxy.error("DescribePlacementGroups", 403, "UnauthorizedOperation", 5);
    let later = t0() + SignedDuration::from_mins(5);
    let failed = groups.resolve(&c.ec2, Some(&by_name("kafka")), later).await;
    let Resolution::Failed {
        error, last_good, ..
    } = &failed
    else {
        panic!("{failed:?}");
    };
    assert!(!error.is_retryable(), "{error}");
    assert_eq!(
        last_good.as_ref().map(|g| g.id.as_str()),
        Some(PG),
        "launches go on in it"
    );
    let cond = placement_condition(&failed);
    assert_eq!(cond.reason, "PlacementGroupResolutionFailed");
    let other = groups.resolve(&c.ec2, Some(&by_name("etcd")), later).await;
    assert!(
        matches!(
            other,
            Resolution::Failed {
                last_good: None,
                ..
            }
        ),
        "{other:?}"
    );
}

#[tokio::test]
async fn discovery_reads_the_strategies_each_type_supports() {
    let proxy = Proxy::start("http://127.0.0.1:9").await;
    let c = clients(&proxy.url).await;
    serve(
        &proxy,
        "DescribeInstanceTypes",
        "describe-instance-types-placement.xml",
        1,
    );
    let specs = kerf_aws::discovery::instance_types(&c.ec2, &[])
        .await
        .unwrap();
    let of = |n: &str| specs.iter().find(|s| s.name == n).unwrap();
    assert_eq!(
        of("c5.large").placement_strategies,
        [Strategy::Cluster, Strategy::Partition, Strategy::Spread]
    );
    assert_eq!(
        of("t3.medium").supports_placement(Strategy::Cluster),
        Some(false)
    );
    assert_eq!(
        of("t3.medium").supports_placement(Strategy::Spread),
        Some(true)
    );
}

#[tokio::test]
async fn an_instance_reports_its_partition() {
    let proxy = Proxy::start("http://127.0.0.1:9").await;
    let c = clients(&proxy.url).await;
    serve(
        &proxy,
        "DescribeInstances",
        "describe-instances-partition.xml",
        1,
    );
    let found = kerf_aws::instances::describe(&c.ec2, &["i-0aaa1111aaaa1111a".into()])
        .await
        .unwrap();
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].partition, Some(2));
    assert_eq!(found[0].node_claim(), Some("kafka-abcde"));
}

#[tokio::test]
async fn the_launch_template_names_the_group_and_partition() {
    let proxy = Proxy::start("http://127.0.0.1:9").await;
    let c = clients(&proxy.url).await;
    serve(
        &proxy,
        "DescribeLaunchTemplates",
        "describe-launch-templates-none.xml",
        1,
    );
    serve(
        &proxy,
        "CreateLaunchTemplate",
        "create-launch-template-placement.xml",
        1,
    );
    let spec = LaunchTemplateSpec {
        image_id: "ami-0a5e00000000000a1".into(),
        security_group_ids: vec!["sg-0abc".into()],
        user_data: "#!/bin/bash".into(),
        block_devices: vec![launch_template::BlockDevice::al2023_root()],
        metadata: MetadataOptions::default(),
        instance_profile: None,
        tags: Default::default(),
        network: Default::default(),
        interfaces: Default::default(),
        connection_tracking: None,
        placement: Some(Placement {
            group_id: PG.into(),
            partition: Some(2),
        }),
        reservation: Default::default(),
    };
    let lt = launch_template::ensure(&c.ec2, &spec, t0()).await.unwrap();
    assert_eq!(lt.id, "lt-0a1b2c3d4e5f60718");
    let form = &proxy.forms("CreateLaunchTemplate")[0];
    assert!(
        has(form, "LaunchTemplateData.Placement.GroupId", PG),
        "{form:?}"
    );
    assert!(
        has(form, "LaunchTemplateData.Placement.PartitionNumber", "2"),
        "{form:?}"
    );
}
