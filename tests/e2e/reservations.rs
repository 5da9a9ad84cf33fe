//! Capacity reservations end to end in the simulated EC2: pods fill an on-demand capacity
//! reservation (ODCR) the EC2NodeClass selects first and overflow to purchased capacity; the
//! class status lists the reservation with `CapacityReservationsReady=True`; a capacity block
//! near its end is drained and replaced before EC2 takes its instances back; a cancelled
//! ODCR leaves its instances running as on-demand ones, and their NodeClaims and Nodes are
//! relabelled `on-demand`; a node in a reservation its class no longer selects drifts.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers outside #[test] fns

use std::collections::BTreeMap;

use jiff::{SignedDuration, Timestamp};
use kerf_api::v1::{ConditionStatus, EC2NodeClass, NodeClaim};
use kerf_catalog::CapacityType;
use kerf_e2e::world::*;
use kerf_labels::aws::CAPACITY_RESERVATION_ID;
use kerf_sim::world::cloud::ReservationSpec;
use kerf_sim::world::{World, WorldOptions};
use kube::Api;

const TYPE: &str = "m5.xlarge";
const ZONE: &str = "us-west-2a";
const ODCR: &str = "cr-0a5e000000000001";
const BLOCK: &str = "cr-0a5e0000000000b1";

/// A NodePool of `m5.xlarge` (three 1-CPU pods each) that takes reserved, spot and
/// on-demand capacity, and its EC2NodeClass selecting reservation `id`.
fn pool_and_class(id: &str) -> String {
    format!(
        r#"apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {{name: default}}
spec:
  template:
    spec:
      requirements:
        - {{key: node.kubernetes.io/instance-type, operator: In, values: [{TYPE}]}}
        - {{key: karpenter.sh/capacity-type, operator: In, values: [reserved, spot, on-demand]}}
      nodeClassRef: {{group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}}
  disruption:
    consolidationPolicy: WhenEmpty
    consolidateAfter: 1m
---
apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata: {{name: default}}
spec:
  role: KarpenterNodeRole-my-cluster
  amiSelectorTerms: [{{alias: al2023@latest}}]
  subnetSelectorTerms: [{{tags: {{karpenter.sh/discovery: my-cluster}}}}]
  securityGroupSelectorTerms: [{{tags: {{karpenter.sh/discovery: my-cluster}}}}]
  capacityReservationSelectorTerms: [{{id: {id}}}]
"#
    )
}

/// A world whose cloud holds `reservation` and whose pool and class select it.
async fn reserved_world(reservation: ReservationSpec, options: WorldOptions) -> World {
    let w = World::start(options).await.unwrap();
    let id = reservation.id.clone();
    w.cloud.add_reservation(reservation);
    w.apply(&pool_and_class(&id)).await.unwrap();
    w
}

fn label<'a>(c: &'a NodeClaim, key: &str) -> Option<&'a str> {
    c.metadata.labels.as_ref()?.get(key).map(String::as_str)
}

/// The live NodeClaims' capacity types and reservation ids, sorted.
async fn placements(w: &World) -> Vec<(String, Option<String>)> {
    let mut out: Vec<_> = claims(&w.client)
        .await
        .iter()
        .filter(|c| c.metadata.deletion_timestamp.is_none())
        .map(|c| {
            (
                label(c, kerf_labels::CAPACITY_TYPE)
                    .unwrap_or_default()
                    .to_string(),
                label(c, CAPACITY_RESERVATION_ID).map(str::to_string),
            )
        })
        .collect();
    out.sort();
    out
}

/// The ids of the live instances in reservation `id`.
fn instances_in(w: &World, id: &str) -> Vec<String> {
    w.cloud
        .instances()
        .into_iter()
        .filter(|i| i.info.state != "terminated")
        .filter(|i| i.info.capacity_reservation.as_deref() == Some(id))
        .map(|i| i.info.id)
        .collect()
}

async fn class(w: &World) -> EC2NodeClass {
    Api::<EC2NodeClass>::all(w.client.clone())
        .get("default")
        .await
        .unwrap()
}

/// Scales `inflate` to `n` pods and runs until they all run.
async fn inflate_to(w: &mut World, n: u32) {
    w.apply(&inflate(n)).await.unwrap();
    let ran = w.run_until(SignedDuration::from_mins(5), move |c| {
        all_running(c, n as usize)
    });
    assert!(
        ran.await.unwrap(),
        "not every pod runs: {:?}; claims {:?}",
        not_running(&w.client).await,
        placements(w).await
    );
}

#[tokio::test]
async fn pods_fill_the_reservation_first_and_overflow_to_purchased_capacity() {
    let n = 2;
    let mut w = reserved_world(
        ReservationSpec::new(ODCR, TYPE, ZONE, n),
        WorldOptions::default(),
    )
    .await;
    inflate_to(&mut w, 12).await;

    let all = placements(&w).await;
    let reserved: Vec<_> = all.iter().filter(|(ct, _)| ct == "reserved").collect();
    assert_eq!(
        reserved.len(),
        n as usize,
        "exactly the reservation's room is reserved: {all:?}"
    );
    assert!(
        reserved.iter().all(|(_, id)| id.as_deref() == Some(ODCR)),
        "{all:?}"
    );
    let rest: Vec<_> = all.iter().filter(|(ct, _)| ct != "reserved").collect();
    assert!(!rest.is_empty(), "the rest overflows: {all:?}");
    assert!(
        rest.iter()
            .all(|(ct, id)| (ct == "on-demand" || ct == "spot") && id.is_none()),
        "{all:?}"
    );
    assert_eq!(instances_in(&w, ODCR).len(), n as usize);
    assert_eq!(
        w.cloud.reservations()[0].1,
        0,
        "the reservation has no room left"
    );

    let status = class(&w).await.status.unwrap();
    let ids: Vec<&str> = status
        .capacity_reservations
        .iter()
        .map(|r| r.id.as_str())
        .collect();
    assert_eq!(ids, [ODCR]);
    let ready = status
        .conditions
        .iter()
        .find(|c| c.type_ == "CapacityReservationsReady")
        .expect("CapacityReservationsReady");
    assert_eq!(ready.status, ConditionStatus::True);
    assert!(
        violations(&w).await.is_empty(),
        "{:?}",
        violations(&w).await
    );
}

#[tokio::test]
async fn a_capacity_block_near_its_end_is_drained_and_replaced_before_it_ends() {
    let start = WorldOptions::default().start;
    let end = start + SignedDuration::from_mins(50);
    let block = ReservationSpec::new(BLOCK, TYPE, ZONE, 1).block_until(end);
    let mut w = reserved_world(block, WorldOptions::default()).await;
    inflate_to(&mut w, 3).await;
    let in_block = instances_in(&w, BLOCK);
    assert_eq!(in_block.len(), 1, "{:?}", placements(&w).await);
    assert!(
        w.now() < end - kerf_catalog::reservation::EXPIRING_BEFORE,
        "launched before the block was expiring"
    );

    let moved = w.run_until(SignedDuration::from_mins(45), |c| async move {
        let in_block = claims(&c)
            .await
            .iter()
            .any(|x| label(x, CAPACITY_RESERVATION_ID) == Some(BLOCK));
        !in_block && all_running(c, 3).await
    });
    assert!(
        moved.await.unwrap(),
        "the block's node was not replaced: {:?}",
        placements(&w).await
    );
    let reclaim_starts: Timestamp = end - SignedDuration::from_mins(30);
    assert!(
        w.now() < reclaim_starts,
        "drained at {} (EC2 reclaims from {reclaim_starts})",
        w.now()
    );
    assert!(
        placements(&w).await.iter().all(|(ct, _)| ct != "reserved"),
        "the expiring block is not offered again: {:?}",
        placements(&w).await
    );
}

#[tokio::test]
async fn cancelling_an_odcr_leaves_its_instances_running_as_on_demand() {
    let mut w = reserved_world(
        ReservationSpec::new(ODCR, TYPE, ZONE, 2),
        WorldOptions::default(),
    )
    .await;
    inflate_to(&mut w, 6).await;
    let before = instances_in(&w, ODCR);
    assert_eq!(before.len(), 2, "{:?}", placements(&w).await);

    assert!(w.cloud.cancel_reservation(ODCR));
    w.run_for(SignedDuration::from_mins(2)).await.unwrap();

    let after: BTreeMap<String, _> = w
        .cloud
        .instances()
        .into_iter()
        .map(|i| (i.info.id.clone(), i.info))
        .collect();
    for id in &before {
        let i = &after[id];
        assert_eq!(
            (
                i.state.as_str(),
                i.capacity_type,
                i.capacity_reservation.as_deref()
            ),
            ("running", CapacityType::OnDemand, None),
            "{id} keeps running as on-demand"
        );
    }
    let unlisted = w.run_until(SignedDuration::from_mins(10), |c| async move {
        Api::<EC2NodeClass>::all(c)
            .get("default")
            .await
            .ok()
            .and_then(|k| k.status)
            .is_some_and(|s| s.capacity_reservations.is_empty())
    });
    assert!(
        unlisted.await.unwrap(),
        "a cancelled reservation is no longer listed: {:?}",
        class(&w).await.status.map(|s| s.capacity_reservations)
    );
    assert!(all_running(w.client.clone(), 6).await);
    assert_demoted(&w, &before).await;
}

/// The NodeClaims and Nodes of instances `ids` are labelled `on-demand`, without reservation
/// labels, and were relabelled in place (the same NodeClaims, not replacements).
async fn assert_demoted(w: &World, ids: &[String]) {
    let held = |labels: Option<&BTreeMap<String, String>>| {
        let l = labels.cloned().unwrap_or_default();
        let reservation = kerf_labels::aws::RESERVATION_LABELS
            .iter()
            .any(|k| l.contains_key(*k));
        (l.get(kerf_labels::CAPACITY_TYPE).cloned(), reservation)
    };
    let on_demand = (Some("on-demand".to_string()), false);
    let mine = |pid: Option<&String>| ids.iter().any(|id| pid.is_some_and(|p| p.ends_with(id)));
    let all = claims(&w.client).await;
    let demoted: Vec<_> = all
        .iter()
        .filter(|c| mine(c.status.as_ref().and_then(|s| s.provider_id.as_ref())))
        .collect();
    assert_eq!(
        demoted.len(),
        ids.len(),
        "the same NodeClaims, not replaced"
    );
    for c in demoted {
        assert_eq!(
            held(c.metadata.labels.as_ref()),
            on_demand,
            "{:?}",
            c.metadata.name
        );
        assert!(
            c.metadata.deletion_timestamp.is_none(),
            "no drift: the node stays"
        );
    }
    let nodes = nodes(&w.client).await;
    let relabelled: Vec<_> = nodes
        .iter()
        .filter(|n| mine(n.spec.as_ref().and_then(|s| s.provider_id.as_ref())))
        .collect();
    assert_eq!(relabelled.len(), ids.len());
    for n in relabelled {
        assert_eq!(
            held(n.metadata.labels.as_ref()),
            on_demand,
            "{:?}",
            n.metadata.name
        );
    }
    let logged = w
        .logs
        .entries()
        .iter()
        .any(|l| l["message"] == "updated capacity type for nodeclaims");
    assert!(logged, "capacityreservation.capacitytype logs the relabel");
}

#[tokio::test]
async fn a_node_in_a_reservation_the_class_no_longer_selects_drifts() {
    let mut w = reserved_world(
        ReservationSpec::new(ODCR, TYPE, ZONE, 1),
        WorldOptions::default(),
    )
    .await;
    inflate_to(&mut w, 3).await;
    let held = instances_in(&w, ODCR);
    assert_eq!(held.len(), 1, "{:?}", placements(&w).await);
    let claim = claims(&w.client)
        .await
        .into_iter()
        .find(|c| label(c, CAPACITY_RESERVATION_ID) == Some(ODCR))
        .and_then(|c| c.metadata.name)
        .unwrap();
    // The class now selects another reservation (the selector terms are not in its hash).
    w.apply(&pool_and_class("cr-0a5e0000000000ff"))
        .await
        .unwrap();
    let name = claim.clone();
    let drifted = w.run_until(SignedDuration::from_mins(3), move |c| {
        let name = name.clone();
        async move {
            claims(&c).await.iter().any(|x| {
                x.metadata.name.as_deref() == Some(name.as_str())
                    && x.status.as_ref().is_some_and(|s| {
                        s.conditions.iter().any(|k| {
                            k.type_ == "Drifted"
                                && k.status == ConditionStatus::True
                                && k.reason == "CapacityReservationDrift"
                        })
                    })
            })
        }
    });
    assert!(drifted.await.unwrap(), "{:?}", placements(&w).await);
    assert!(
        replaced(&mut w, &claim, 3, SignedDuration::from_mins(10))
            .await
            .unwrap(),
        "the drifted node is replaced: {:?}",
        placements(&w).await
    );
    assert!(
        placements(&w).await.iter().all(|(ct, _)| ct != "reserved"),
        "the replacement is bought: {:?}",
        placements(&w).await
    );
}
