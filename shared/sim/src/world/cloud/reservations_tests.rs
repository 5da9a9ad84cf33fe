use std::sync::Arc;

use jiff::SignedDuration;
use kerf_api::v1::EC2NodeClass;
use kerf_catalog::unavailable::OfferingKey;
use kerf_control::ports::{Cloud, CloudError, LaunchOption, LaunchRequest, Launched, ManualClock};

use super::*;

const TYPE: &str = "m5.large";
const ZONE: &str = "us-west-2a";

fn t0() -> Timestamp {
    "2026-01-01T00:00:00Z".parse().unwrap()
}

fn cloud() -> (SimCloud, ManualClock) {
    let clock = ManualClock::new(t0());
    let dyn_clock: Arc<dyn kerf_control::ports::Clock> = Arc::new(clock.clone());
    let c = SimCloud::new("us-west-2", dyn_clock, SignedDuration::from_secs(30));
    (c, clock)
}

fn class(terms: &str) -> EC2NodeClass {
    let yaml = format!(
        r#"apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata: {{name: default}}
spec:
  role: KarpenterNodeRole
  amiSelectorTerms: [{{alias: al2023@latest}}]
  subnetSelectorTerms: [{{tags: {{karpenter.sh/discovery: sim}}}}]
  securityGroupSelectorTerms: [{{tags: {{karpenter.sh/discovery: sim}}}}]
  capacityReservationSelectorTerms: {terms}
"#
    );
    yaml_serde::from_str(&yaml).unwrap()
}

fn reserved(c: &SimCloud, class: &EC2NodeClass, uid: &str) -> Result<Launched, CloudError> {
    let catalog = c.catalog_for(class).unwrap();
    let options: Vec<LaunchOption> = catalog
        .instance_types
        .iter()
        .flat_map(|t| t.offerings.iter().map(move |o| (t, o)))
        .filter(|(_, o)| o.capacity_type == CapacityType::Reserved)
        .map(|(t, o)| LaunchOption {
            instance_type: t.name.clone(),
            zone: o.zone.clone(),
            price: o.price,
            reservation: o.reservation.clone(),
        })
        .collect();
    assert!(!options.is_empty(), "no reserved offering");
    let req = LaunchRequest {
        node_claim: format!("claim-{uid}"),
        node_claim_uid: uid.into(),
        node_pool: "default".into(),
        node_class: Arc::new(class.clone()),
        capacity_type: CapacityType::Reserved,
        options,
        prioritized: false,
        labels: BTreeMap::new(),
        taints: Vec::new(),
        efa_requested: false,
    };
    c.launch_now(&req)
}

fn offering(c: &SimCloud, class: &EC2NodeClass) -> Option<kerf_catalog::Offering> {
    let catalog = c.catalog_for(class).unwrap();
    let t = catalog.instance_types.iter().find(|t| t.name == TYPE)?;
    t.offerings
        .iter()
        .find(|o| o.capacity_type == CapacityType::Reserved)
        .cloned()
}

#[test]
fn terms_select_by_id_or_by_tags_and_owner_never_by_owner_alone() {
    let (c, _) = cloud();
    let mut tagged = ReservationSpec::new("cr-0b", TYPE, ZONE, 1);
    tagged.tags.insert("team".into(), "ml".into());
    c.add_reservation(ReservationSpec::new("cr-0a", TYPE, ZONE, 2));
    c.add_reservation(tagged);
    let ids = |terms: &str| -> Vec<String> {
        c.selected(&class(terms), t0())
            .into_iter()
            .map(|r| r.id)
            .collect()
    };
    assert_eq!(ids("[{id: cr-0a}]"), ["cr-0a"]);
    assert_eq!(ids("[{tags: {team: ml}}]"), ["cr-0b"]);
    assert_eq!(ids("[{tags: {team: '*'}}]"), ["cr-0b"]);
    assert_eq!(
        ids("[{tags: {team: ml}, ownerID: '210987654321'}]"),
        [""; 0]
    );
    assert_eq!(ids("[{ownerID: '123456789012'}]"), [""; 0]);
    assert_eq!(
        ids("[{instanceMatchCriteria: targeted}]"),
        ["cr-0a", "cr-0b"]
    );
    assert_eq!(ids("[]"), [""; 0]);
}

#[test]
fn launches_take_room_until_none_is_left_and_terminations_give_it_back() {
    let (c, _) = cloud();
    let nc = class("[{id: cr-0a}]");
    c.add_reservation(ReservationSpec::new("cr-0a", TYPE, ZONE, 2));
    let o = offering(&c, &nc).unwrap();
    assert!(o.available);
    assert_eq!(o.reservation.as_ref().map(|r| r.capacity), Some(2));
    let first = reserved(&c, &nc, "u1").unwrap();
    assert_eq!(first.capacity_type, CapacityType::Reserved);
    assert_eq!(
        first.reservation.as_ref().map(|r| r.id.as_str()),
        Some("cr-0a")
    );
    reserved(&c, &nc, "u2").unwrap();
    assert!(
        !offering(&c, &nc).unwrap().available,
        "the reservation is full"
    );
    let Err(CloudError::NoCapacity(keys)) = reserved(&c, &nc, "u3") else {
        panic!("a launch into a full reservation fails for capacity");
    };
    assert_eq!(
        keys,
        [OfferingKey::new(CapacityType::Reserved, TYPE, ZONE).in_reservation(Some("cr-0a"))]
    );
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    rt.block_on(c.terminate(std::slice::from_ref(&first.instance_id)))
        .unwrap();
    assert_eq!(
        c.reservations()[0].1,
        1,
        "the terminated instance gave its room back"
    );
    assert!(reserved(&c, &nc, "u3").is_ok());
}

#[test]
fn a_cancelled_reservation_is_not_selected_and_its_instances_become_on_demand() {
    let (c, _) = cloud();
    let nc = class("[{id: cr-0a}]");
    c.add_reservation(ReservationSpec::new("cr-0a", TYPE, ZONE, 2));
    let l = reserved(&c, &nc, "u1").unwrap();
    assert!(c.cancel_reservation("cr-0a"));
    assert!(!c.cancel_reservation("cr-missing"));
    assert!(c.selected(&nc, t0()).is_empty());
    assert!(offering(&c, &nc).is_none());
    let i = c
        .instances()
        .into_iter()
        .find(|i| i.info.id == l.instance_id)
        .unwrap();
    assert_eq!(
        (
            i.info.capacity_type,
            i.info.capacity_reservation,
            i.info.state.as_str()
        ),
        (CapacityType::OnDemand, None, "pending")
    );
}

#[test]
fn a_capacity_block_expires_then_ends_and_takes_its_instances() {
    let (c, clock) = cloud();
    let nc = class("[{id: cr-0a}]");
    let end = t0() + SignedDuration::from_hours(2);
    c.add_reservation(ReservationSpec::new("cr-0a", TYPE, ZONE, 1).block_until(end));
    let l = reserved(&c, &nc, "u1").unwrap();
    assert_eq!(c.next_change(), Some(t0() + SignedDuration::from_secs(30)));
    clock.advance_to(end - SignedDuration::from_mins(30));
    let r = c.selected(&nc, clock.moved());
    assert_eq!(
        r[0].state(clock.moved()),
        kerf_catalog::reservation::ReservationState::Expiring
    );
    assert_eq!(c.next_change(), Some(end));
    clock.advance_to(end);
    let i = c
        .instances()
        .into_iter()
        .find(|i| i.info.id == l.instance_id)
        .unwrap();
    assert_eq!(i.info.state, "terminated");
    assert!(
        c.selected(&nc, end).is_empty(),
        "an ended block is not selected"
    );
}

#[test]
fn the_status_lists_the_selected_reservations_with_the_ready_condition() {
    let (c, _) = cloud();
    c.add_reservation(ReservationSpec::new("cr-0b", TYPE, ZONE, 1));
    c.add_reservation(ReservationSpec::new("cr-0a", TYPE, ZONE, 1));
    c.add_reservation(ReservationSpec::new("cr-0c", TYPE, ZONE, 1));
    let s = c.status(&class("[{id: cr-0b}, {id: cr-0a}]")).unwrap();
    let ids: Vec<&str> = s
        .capacity_reservations
        .iter()
        .map(|r| r.id.as_str())
        .collect();
    assert_eq!(ids, ["cr-0a", "cr-0b"]);
    assert_eq!(s.capacity_reservations[0].state, "active");
    let ready = s
        .conditions
        .iter()
        .find(|c| c.type_ == "CapacityReservationsReady")
        .unwrap();
    assert_eq!(ready.status, kerf_api::v1::ConditionStatus::True);
}
