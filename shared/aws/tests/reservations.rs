//! Capacity reservation discovery against recorded-format EC2 responses (moto 5.2.1 has no
//! `DescribeCapacityReservations`): the fault proxy serves the fixtures and records the
//! requests, so both what is sent (ids vs filters, pages) and the reading of the answers (the
//! reservations, their status, the condition) are checked. Launches: `reserved_launch.rs`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "support/mod.rs"]
mod support;

use std::collections::BTreeMap;

use jiff::{SignedDuration, Timestamp};
use kerf_api::v1::ConditionStatus;
use kerf_api::v1::ec2nodeclass::CapacityReservationSelectorTerm;
use kerf_aws::capacity_reservation::CapacityReservations;
use kerf_aws::cloud::{entries, reservations_condition};
use kerf_catalog::reservation::ReservationKind;
use support::clients;
use support::form::get;
use support::proxy::Proxy;
use support::recorded::serve;

const ODCR: &str = "cr-0a1b2c3d4e5f60001";
const BLOCK: &str = "cr-0a1b2c3d4e5f60002";
const INTERRUPTIBLE: &str = "cr-0a1b2c3d4e5f60003";
const DESCRIBE: &str = "DescribeCapacityReservations";

fn t0() -> Timestamp {
    "2026-01-01T00:00:00Z".parse().unwrap()
}

fn terms() -> Vec<CapacityReservationSelectorTerm> {
    let by_tags = CapacityReservationSelectorTerm {
        tags: BTreeMap::from([
            ("team".to_string(), "ml".to_string()),
            ("gpu".to_string(), "*".to_string()),
        ]),
        owner_id: Some("123456789012".into()),
        instance_match_criteria: Some("targeted".into()),
        id: None,
    };
    let by_id = CapacityReservationSelectorTerm {
        id: Some(BLOCK.into()),
        ..Default::default()
    };
    vec![by_tags, by_id]
}

/// The id query's page, then the filter query's two pages.
fn serve_discovery(proxy: &Proxy) {
    serve(
        proxy,
        DESCRIBE,
        "describe-capacity-reservations-by-id.xml",
        1,
    );
    serve(proxy, DESCRIBE, "describe-capacity-reservations.xml", 1);
    serve(
        proxy,
        DESCRIBE,
        "describe-capacity-reservations-page2.xml",
        1,
    );
}

#[tokio::test]
async fn terms_query_by_id_or_by_filters_and_every_page_is_read() {
    let proxy = Proxy::start("http://127.0.0.1:9").await;
    let c = clients(&proxy.url).await;
    serve_discovery(&proxy);
    let cache = CapacityReservations::new();
    let found = cache.resolve(&c.ec2, &terms(), t0()).await;
    assert_eq!(found.error, None);
    let ids: Vec<&str> = found.reservations.iter().map(|r| r.id.as_str()).collect();
    assert_eq!(
        ids,
        [ODCR, BLOCK, INTERRUPTIBLE],
        "united, de-duplicated, the unknown type skipped"
    );
    let forms = proxy.forms(DESCRIBE);
    assert_eq!(forms.len(), 3, "{forms:?}");
    let by_id = &forms[0];
    assert_eq!(get(by_id, "CapacityReservationId.1"), Some(BLOCK));
    assert_eq!(
        get(by_id, "MaxResults"),
        None,
        "EC2 takes no page size with ids"
    );
    assert_eq!(get(by_id, "Filter.1.Name"), Some("state"));
    assert_eq!(get(by_id, "Filter.1.Value.1"), Some("active"));
    assert_eq!(get(by_id, "Filter.2.Name"), None);
    let filtered = &forms[1];
    assert_eq!(get(filtered, "CapacityReservationId.1"), None);
    assert_eq!(get(filtered, "MaxResults"), Some("1000"));
    let filters: Vec<(&str, &str)> = (1..=5)
        .map(|i| {
            let name = get(filtered, &format!("Filter.{i}.Name")).unwrap();
            let value = get(filtered, &format!("Filter.{i}.Value.1")).unwrap();
            (name, value)
        })
        .collect();
    assert_eq!(
        filters,
        [
            ("state", "active"),
            ("owner-id", "123456789012"),
            ("tag-key", "gpu"),
            ("tag:team", "ml"),
            ("instance-match-criteria", "targeted"),
        ]
    );
    assert_eq!(get(&forms[1], "NextToken"), None);
    assert_eq!(
        get(&forms[2], "NextToken"),
        Some("eyJ2IjoiMiIsImMiOiJwYWdlMiJ9")
    );
    assert_eq!(get(&forms[2], "Filter.4.Name"), Some("tag:team"));
}

#[tokio::test]
async fn ec2_reservations_become_the_status_karpenter_shows() {
    let proxy = Proxy::start("http://127.0.0.1:9").await;
    let c = clients(&proxy.url).await;
    serve_discovery(&proxy);
    let found = CapacityReservations::new()
        .resolve(&c.ec2, &terms(), t0())
        .await;
    let by_id = |id: &str| found.reservations.iter().find(|r| r.id == id).unwrap();
    let odcr = by_id(ODCR);
    assert_eq!(
        (odcr.kind, odcr.interruptible, odcr.available),
        (ReservationKind::Default, false, 3)
    );
    assert_eq!(odcr.end_time, None);
    let block = by_id(BLOCK);
    assert_eq!(block.kind, ReservationKind::CapacityBlock);
    assert_eq!(
        block.end_time,
        Some("2026-01-03T11:30:00Z".parse().unwrap())
    );
    assert!(by_id(INTERRUPTIBLE).interruptible);
    let expiring_at = "2026-01-03T10:50:00Z".parse().unwrap();
    let status = entries(&found.reservations, expiring_at);
    let block = status.iter().find(|s| s.id == BLOCK).unwrap();
    assert_eq!(block.state, "expiring", "40 minutes before its end");
    assert_eq!(block.end_time.as_deref(), Some("2026-01-03T11:30:00Z"));
    assert_eq!(
        (
            block.availability_zone.as_str(),
            block.instance_type.as_str()
        ),
        ("us-west-2b", "p5.48xlarge")
    );
    assert_eq!(block.reservation_type, "capacity-block");
    let odcr = status.iter().find(|s| s.id == ODCR).unwrap();
    assert_eq!(
        (odcr.state.as_str(), odcr.owner_id.as_str()),
        ("active", "123456789012")
    );
    let cond = reservations_condition(&found);
    assert_eq!(cond.status, ConditionStatus::True);
}

#[tokio::test]
async fn answers_are_cached_a_failure_keeps_the_last_and_no_terms_make_no_call() {
    let proxy = Proxy::start("http://127.0.0.1:9").await;
    let c = clients(&proxy.url).await;
    serve_discovery(&proxy);
    let cache = CapacityReservations::new();
    let first = cache.resolve(&c.ec2, &terms(), t0()).await;
    let again = cache
        .resolve(&c.ec2, &terms(), t0() + SignedDuration::from_secs(30))
        .await;
    assert_eq!(again, first);
    assert_eq!(proxy.count(DESCRIBE), 3, "cached for a minute");
    let none = cache.resolve(&c.ec2, &[], t0()).await;
    assert!(none.reservations.is_empty() && none.error.is_none());
    assert_eq!(proxy.count(DESCRIBE), 3, "no terms, no call");
    proxy.error(DESCRIBE, 403, "UnauthorizedOperation", 5);
    let later = t0() + SignedDuration::from_mins(5);
    let failed = cache.resolve(&c.ec2, &terms(), later).await;
    let error = failed.error.as_ref().expect("failed");
    assert!(!error.is_retryable(), "{error}");
    assert_eq!(failed.reservations, first.reservations, "launches go on");
    let cond = reservations_condition(&failed);
    assert_eq!(
        (cond.status, cond.reason.as_str()),
        (
            ConditionStatus::False,
            "CapacityReservationsResolutionFailed"
        )
    );
    let after_block = "2026-01-03T12:00:00Z".parse().unwrap();
    let ended = cache.resolve(&c.ec2, &terms(), after_block).await;
    assert!(
        ended.reservations.iter().all(|r| r.id != BLOCK),
        "an ended block is dropped"
    );
}

#[tokio::test]
async fn an_unknown_id_is_no_reservation() {
    let proxy = Proxy::start("http://127.0.0.1:9").await;
    let c = clients(&proxy.url).await;
    proxy.error(DESCRIBE, 400, "InvalidCapacityReservationId.NotFound", 1);
    let term = CapacityReservationSelectorTerm {
        id: Some("cr-0000000000000dead".into()),
        ..Default::default()
    };
    let found = CapacityReservations::new()
        .resolve(&c.ec2, &[term], t0())
        .await;
    assert_eq!((found.reservations.len(), found.error), (0, None));
}
