//! Reserved launches against recorded-format EC2 responses (moto 5.2.1 ignores reservation
//! options on templates and fleets): the fault proxy records the CreateLaunchTemplate and
//! CreateFleet requests of each reservation market, and serves a reserved fleet's answer.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "support/mod.rs"]
mod support;

use std::collections::BTreeMap;

use jiff::Timestamp;
use kerf_aws::fleet::{self, LaunchOption, LaunchRequest};
use kerf_aws::launch_template::{self, LaunchTemplateSpec, MetadataOptions, ReservationTarget};
use kerf_aws::network::Subnet;
use kerf_catalog::CapacityType;
use kerf_catalog::reservation::{ReservationKind, ReservedOffering};
use kerf_catalog::unavailable::OfferingKey;
use support::clients;
use support::form::get;
use support::proxy::Proxy;
use support::recorded::serve;

const ODCR: &str = "cr-0a1b2c3d4e5f60001";
const BLOCK: &str = "cr-0a1b2c3d4e5f60002";
const INTERRUPTIBLE: &str = "cr-0a1b2c3d4e5f60003";

fn t0() -> Timestamp {
    "2026-01-01T00:00:00Z".parse().unwrap()
}

fn reserved(id: &str, kind: ReservationKind, interruptible: bool) -> ReservedOffering {
    ReservedOffering {
        id: id.into(),
        kind,
        interruptible,
        capacity: 2,
    }
}

fn spec(target: ReservationTarget) -> LaunchTemplateSpec {
    LaunchTemplateSpec {
        image_id: "ami-0a5e00000000000a1".into(),
        security_group_ids: vec!["sg-0abc".into()],
        user_data: "#!/bin/bash".into(),
        block_devices: vec![launch_template::BlockDevice::al2023_root()],
        metadata: MetadataOptions::default(),
        instance_profile: None,
        tags: Default::default(),
        network: Default::default(),
        placement: None,
        reservation: target,
        connection_tracking: None,
        interfaces: launch_template::Interfaces::Primary,
    }
}

#[tokio::test]
async fn templates_say_which_reservations_their_instances_use() {
    let proxy = Proxy::start("http://127.0.0.1:9").await;
    let c = clients(&proxy.url).await;
    let targets = [
        ReservationTarget::of(None, true),
        ReservationTarget::of(Some(&reserved(ODCR, ReservationKind::Default, false)), true),
        ReservationTarget::of(
            Some(&reserved(BLOCK, ReservationKind::CapacityBlock, false)),
            true,
        ),
        ReservationTarget::of(
            Some(&reserved(INTERRUPTIBLE, ReservationKind::Default, true)),
            true,
        ),
        ReservationTarget::of(None, false),
    ];
    let n = targets.len();
    serve(
        &proxy,
        "DescribeLaunchTemplates",
        "describe-launch-templates-none.xml",
        n,
    );
    let created = "create-launch-template-placement.xml";
    serve(&proxy, "CreateLaunchTemplate", created, n);
    for t in targets {
        launch_template::ensure(&c.ec2, &spec(t), t0())
            .await
            .unwrap();
    }
    let forms = proxy.forms("CreateLaunchTemplate");
    type Read<'a> = (Option<&'a str>, Option<&'a str>, Option<&'a str>);
    fn read(f: &[(String, String)]) -> Read<'_> {
        let crs = "LaunchTemplateData.CapacityReservationSpecification";
        (
            get(f, &format!("{crs}.CapacityReservationPreference")),
            get(
                f,
                &format!("{crs}.CapacityReservationTarget.CapacityReservationId"),
            ),
            get(f, "LaunchTemplateData.InstanceMarketOptions.MarketType"),
        )
    }
    let only = Some("capacity-reservations-only");
    assert_eq!(
        read(&forms[0]),
        (Some("none"), None, None),
        "on-demand or spot"
    );
    assert_eq!(read(&forms[1]), (only, Some(ODCR), None));
    assert_eq!(read(&forms[2]), (only, Some(BLOCK), Some("capacity-block")));
    assert_eq!(
        read(&forms[3]),
        (
            only,
            Some(INTERRUPTIBLE),
            Some("interruptible-capacity-reservation")
        )
    );
    assert_eq!(read(&forms[4]), (None, None, None), "the gate off");
    let names: Vec<&str> = forms
        .iter()
        .map(|f| get(f, "LaunchTemplateName").unwrap())
        .collect();
    for (i, a) in names.iter().enumerate() {
        assert!(!names[i + 1..].contains(a), "one template per reservation");
    }
}

fn subnet(id: &str, zone: &str) -> Subnet {
    Subnet {
        id: id.into(),
        zone: zone.into(),
        zone_id: String::new(),
        available_ips: 100,
    }
}

fn request(ct: CapacityType, reservations: [Option<ReservedOffering>; 2]) -> LaunchRequest {
    let [a, b] = reservations;
    let option = |zone: &str, lt: &str, reservation| LaunchOption {
        instance_type: "m5.large".into(),
        zone: zone.into(),
        price: 0.0000000096,
        launch_template: lt.into(),
        reservation,
    };
    LaunchRequest {
        cluster: "c".into(),
        nodeclaim_name: "nc".into(),
        nodeclaim_uid: "uid".into(),
        nodepool: "default".into(),
        nodeclass: "default".into(),
        capacity_type: ct,
        options: vec![
            option("us-west-2a", "kerf.k8s.aws/00000000000000a1", a),
            option("us-west-2b", "kerf.k8s.aws/00000000000000b2", b),
        ],
        subnets: BTreeMap::from([
            ("us-west-2a".into(), subnet("subnet-0aaa1111", "us-west-2a")),
            ("us-west-2b".into(), subnet("subnet-0bbb2222", "us-west-2b")),
        ]),
        tags: BTreeMap::new(),
        prioritized: false,
        placement_group: None,
    }
}

#[tokio::test]
async fn each_reservation_market_has_its_own_fleet() {
    let proxy = Proxy::start("http://127.0.0.1:9").await;
    let c = clients(&proxy.url).await;
    let pair = |kind, interruptible| {
        let r = |id: &str| Some(reserved(id, kind, interruptible));
        [r("cr-0a1b2c3d4e5f6000a"), r("cr-0a1b2c3d4e5f6000b")]
    };
    let requests = [
        request(
            CapacityType::Reserved,
            pair(ReservationKind::Default, false),
        ),
        request(
            CapacityType::Reserved,
            pair(ReservationKind::CapacityBlock, false),
        ),
        request(CapacityType::Reserved, pair(ReservationKind::Default, true)),
        request(CapacityType::OnDemand, [None, None]),
    ];
    serve(
        &proxy,
        "CreateFleet",
        "create-fleet-reserved.xml",
        requests.len(),
    );
    for r in &requests {
        fleet::create_fleet(&c.ec2, r)
            .unwrap()
            .send()
            .await
            .unwrap();
    }
    let forms = proxy.forms("CreateFleet");
    type Read<'a> = (Option<&'a str>, Option<&'a str>, Option<&'a str>);
    fn read(f: &[(String, String)]) -> Read<'_> {
        (
            get(f, "TargetCapacitySpecification.DefaultTargetCapacityType"),
            get(f, "OnDemandOptions.AllocationStrategy"),
            get(f, "ReservedCapacityOptions.ReservationType.1"),
        )
    }
    let lowest = Some("lowest-price");
    assert_eq!(read(&forms[0]), (Some("on-demand"), lowest, None));
    assert_eq!(read(&forms[1]), (Some("capacity-block"), None, None));
    assert_eq!(
        read(&forms[2]),
        (
            Some("reserved-capacity"),
            None,
            Some("interruptible-capacity-reservation")
        )
    );
    assert_eq!(read(&forms[3]), (Some("on-demand"), lowest, None));
    let lts: Vec<&str> = (1..=2)
        .map(|i| {
            let key =
                format!("LaunchTemplateConfigs.{i}.LaunchTemplateSpecification.LaunchTemplateName");
            get(&forms[0], &key).unwrap()
        })
        .collect();
    assert_eq!(
        lts,
        [
            "kerf.k8s.aws/00000000000000a1",
            "kerf.k8s.aws/00000000000000b2"
        ],
        "each reservation's template"
    );
}

#[tokio::test]
async fn a_reserved_launch_reports_its_reservation_and_marks_the_one_that_ran_out() {
    let proxy = Proxy::start("http://127.0.0.1:9").await;
    let c = clients(&proxy.url).await;
    serve(&proxy, "CreateFleet", "create-fleet-reserved.xml", 1);
    let a = reserved("cr-0a1b2c3d4e5f6000a", ReservationKind::Default, false);
    let b = reserved("cr-0a1b2c3d4e5f60005", ReservationKind::Default, false);
    let req = request(CapacityType::Reserved, [Some(a.clone()), Some(b.clone())]);
    let out = fleet::create_fleet(&c.ec2, &req)
        .unwrap()
        .send()
        .await
        .unwrap();
    let l = fleet::interpret(&out, &req).unwrap();
    assert_eq!(l.instance_id, "i-0c1d2e3f4a5b6c7d8");
    assert_eq!(l.capacity_type, CapacityType::Reserved);
    assert_eq!(l.reservation, Some(a));
    let ran_out = OfferingKey::new(CapacityType::Reserved, "m5.large", "us-west-2b")
        .in_reservation(Some(&b.id));
    assert_eq!(l.unavailable, [ran_out]);
}
