//! The ConfigMap-backed unavailable-offerings store against the in-process API server.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers outside #[test] fns

mod common;

use common::start;
use jiff::{SignedDuration, Timestamp};
use k8s_openapi::api::core::v1::ConfigMap;
use kerf_catalog::CapacityType;
use kerf_catalog::unavailable::{
    CONFIGMAP_NAME, MAX_WRITE_ATTEMPTS, OfferingKey, UNAVAILABLE_TTL, UnavailableOfferings,
    UnavailableOfferingsStore, marks,
};
use kerf_kube::{ClusterError, ConfigMapOfferingStore};
use kerf_sim::{ApiError, Fault, Sim};
use kube::api::Api;
use std::collections::BTreeMap;

const NS: &str = "kerf";

fn t0() -> Timestamp {
    "2025-01-01T00:00:00Z".parse().unwrap()
}

fn spot(itype: &str, zone: &str) -> OfferingKey {
    OfferingKey::new(CapacityType::Spot, itype, zone)
}

async fn raw_data(client: &kube::Client) -> BTreeMap<String, String> {
    let cm = Api::<ConfigMap>::namespaced(client.clone(), NS)
        .get(CONFIGMAP_NAME)
        .await
        .unwrap();
    cm.data.unwrap_or_default()
}

fn statuses(sim: &Sim, method: &str) -> Vec<u16> {
    sim.requests()
        .into_iter()
        .filter(|r| r.method == method && r.uri.contains("/configmaps"))
        .map(|r| r.status)
        .collect()
}

fn fault(method: &str, times: usize, error: ApiError) -> Fault {
    Fault {
        method: method.into(),
        path_contains: format!("/namespaces/{NS}/configmaps"),
        times,
        error,
    }
}

/// Goes through the catalog's port, as a launcher in another adapter crate would.
async fn record_via_port<S: UnavailableOfferingsStore>(
    store: &S,
    keys: &[OfferingKey],
    now: Timestamp,
) -> Result<UnavailableOfferings, S::Error> {
    store.record(&marks(keys, now), now).await
}

#[tokio::test]
async fn cache_round_trips_through_a_configmap() {
    let (sim, client) = start().await;
    let store = ConfigMapOfferingStore::new(client.clone(), NS);
    assert!(store.load(t0()).await.unwrap().is_empty(), "absent = empty");
    let mut m = marks(&[spot("m5.large", "us-west-2a")], t0());
    m.mark_subnet("subnet-0abc", t0());
    store.record(&m, t0()).await.unwrap();
    let data = raw_data(&client).await;
    assert_eq!(data["spot_m5.large_us-west-2a"], "2025-01-01T00:03:00Z");
    assert_eq!(data["subnet_subnet-0abc"], "2025-01-01T00:03:00Z");
    let later = t0() + SignedDuration::from_secs(10);
    let od = OfferingKey::new(CapacityType::OnDemand, "c5.large", "us-west-2b");
    record_via_port(&store, std::slice::from_ref(&od), later)
        .await
        .unwrap();
    let loaded = UnavailableOfferingsStore::load(&store, later)
        .await
        .unwrap();
    assert_eq!(loaded.len(), 3);
    assert!(loaded.is_unavailable(&spot("m5.large", "us-west-2a"), later));
    assert!(loaded.is_unavailable(&od, later));
    assert!(loaded.is_subnet_unavailable("subnet-0abc", later));
    assert_eq!(statuses(&sim, "POST"), vec![201], "created once");
    assert_eq!(statuses(&sim, "PUT"), vec![200], "then replaced");
}

#[tokio::test]
async fn concurrent_writers_retry_the_conflict_and_both_entries_survive() {
    let (sim, client) = start().await;
    let a = ConfigMapOfferingStore::new(client.clone(), NS);
    let b = ConfigMapOfferingStore::new(sim.client().unwrap(), NS);
    let (ka, kb) = (
        spot("m5.large", "us-west-2a"),
        spot("c5.large", "us-west-2b"),
    );
    // Both read "absent", both create: one create loses with 409 and re-merges.
    let (ma, mb) = (
        marks(std::slice::from_ref(&ka), t0()),
        marks(std::slice::from_ref(&kb), t0()),
    );
    let (ra, rb) = tokio::join!(a.record(&ma, t0()), b.record(&mb, t0()));
    ra.unwrap();
    rb.unwrap();
    let loaded = a.load(t0()).await.unwrap();
    assert!(loaded.is_unavailable(&ka, t0()) && loaded.is_unavailable(&kb, t0()));
    // Two more racing writers on the existing object: replace at a stale version loses.
    let (kc, kd) = (
        spot("r5.large", "us-west-2c"),
        spot("t3.large", "us-west-2a"),
    );
    let (mc, md) = (marks(&[kc], t0()), marks(&[kd], t0()));
    let (rc, rd) = tokio::join!(a.record(&mc, t0()), b.record(&md, t0()));
    rc.unwrap();
    rd.unwrap();
    let loaded = b.load(t0()).await.unwrap();
    assert_eq!(loaded.len(), 4, "{loaded:?}");
    let conflicts = [statuses(&sim, "POST"), statuses(&sim, "PUT")]
        .concat()
        .into_iter()
        .filter(|s| *s == 409)
        .count();
    assert!(conflicts >= 1, "{:?}", sim.requests());
}

#[tokio::test]
async fn a_conflict_is_retried_after_re_reading() {
    let (sim, client) = start().await;
    let store = ConfigMapOfferingStore::new(client.clone(), NS);
    let ka = spot("m5.large", "us-west-2a");
    store
        .record(&marks(std::slice::from_ref(&ka), t0()), t0())
        .await
        .unwrap();
    sim.inject(fault(
        "PUT",
        2,
        ApiError::new(409, "Conflict", "stale".into(), None),
    ));
    let kb = spot("c5.large", "us-west-2b");
    let written = store
        .record(&marks(std::slice::from_ref(&kb), t0()), t0())
        .await
        .unwrap();
    assert_eq!(written.len(), 2);
    assert_eq!(statuses(&sim, "PUT"), vec![409, 409, 200]);
    assert_eq!(raw_data(&client).await.len(), 2);
}

#[tokio::test]
async fn endless_conflicts_give_up_with_a_retryable_conflict() {
    let (sim, client) = start().await;
    let store = ConfigMapOfferingStore::new(client, NS);
    let conflict = ApiError::new(409, "AlreadyExists", "taken".into(), None);
    sim.inject(fault("POST", MAX_WRITE_ATTEMPTS + 1, conflict));
    let e = store
        .record(&marks(&[spot("m5.large", "us-west-2a")], t0()), t0())
        .await
        .unwrap_err();
    assert!(e.is_conflict() && e.is_retryable(), "{e:?}");
    assert_eq!(statuses(&sim, "POST").len(), MAX_WRITE_ATTEMPTS, "bounded");
}

#[tokio::test]
async fn expired_entries_are_pruned_on_write() {
    let (_sim, client) = start().await;
    let store = ConfigMapOfferingStore::new(client.clone(), NS);
    let old = spot("m5.large", "us-west-2a");
    store
        .record(&marks(std::slice::from_ref(&old), t0()), t0())
        .await
        .unwrap();
    let expiry = t0() + UNAVAILABLE_TTL;
    assert!(
        store.load(expiry).await.unwrap().is_empty(),
        "expired on read"
    );
    assert_eq!(raw_data(&client).await.len(), 1, "reads do not write");
    let new = spot("c5.large", "us-west-2b");
    store
        .record(&marks(std::slice::from_ref(&new), expiry), expiry)
        .await
        .unwrap();
    let data = raw_data(&client).await;
    assert_eq!(
        data.keys().collect::<Vec<_>>(),
        vec!["spot_c5.large_us-west-2b"]
    );
}

#[tokio::test]
async fn server_errors_are_retryable_and_typed() {
    let (sim, client) = start().await;
    let store = ConfigMapOfferingStore::new(client, NS);
    let unavailable = ApiError::new(503, "ServiceUnavailable", "etcd is down".into(), None);
    sim.inject(fault("GET", 1, unavailable));
    let e = store.load(t0()).await.unwrap_err();
    assert!(
        matches!(e, ClusterError::Transient(_)) && e.is_retryable(),
        "{e:?}"
    );
    sim.inject(fault("POST", 1, ApiError::internal("boom")));
    let e = store
        .record(&marks(&[spot("m5.large", "us-west-2a")], t0()), t0())
        .await
        .unwrap_err();
    assert!(
        matches!(e, ClusterError::Transient(_)) && e.is_retryable(),
        "{e:?}"
    );
    let forbidden = ApiError::new(403, "Forbidden", "no RBAC".into(), None);
    sim.inject(fault("GET", 1, forbidden));
    let e = store.load(t0()).await.unwrap_err();
    assert!(
        matches!(e, ClusterError::Fatal(_)) && !e.is_retryable(),
        "{e:?}"
    );
    assert!(store.load(t0()).await.unwrap().is_empty(), "recovers");
}
