//! Reservations in a provisioning plan: claims take a reservation while it has room, each
//! exactly one instance, and the rest are sized and launched with what can be bought.

use std::sync::Arc;

use kerf_catalog::reservation::{ReservationKind, ReservedOffering};
use kerf_catalog::{CapacityType, Catalog, InstanceType, Offering};

use crate::fixtures::{node_res, pending_pod};
use crate::model::{NodePool, Snapshot};
use crate::plan::{Launch, Plan};
use crate::requirements::SelectorRequirement;
use crate::{Options, labels, provision};

fn offering(capacity_type: CapacityType, price: f64) -> Offering {
    Offering {
        zone: "z1".into(),
        capacity_type,
        price,
        available: true,
        partition: None,
        reservation: None,
    }
}

fn reserved(id: &str, price: f64, capacity: u32) -> Offering {
    Offering {
        available: capacity > 0,
        reservation: Some(ReservedOffering {
            id: id.into(),
            kind: ReservationKind::Default,
            interruptible: false,
            capacity,
        }),
        ..offering(CapacityType::Reserved, price)
    }
}

fn itype(name: &str, cpu_m: i64, price: f64, extra: Vec<Offering>) -> InstanceType {
    let mut offerings = vec![
        offering(CapacityType::OnDemand, price),
        offering(CapacityType::Spot, price * 0.4),
    ];
    offerings.extend(extra);
    InstanceType {
        name: name.into(),
        labels: [(labels::ARCH.to_string(), "amd64".to_string())].into(),
        capacity: node_res(cpu_m, 110),
        overhead: Default::default(),
        allocatable: node_res(cpu_m, 110),
        offerings,
        ebs_volume_limit: None,
    }
}

/// A small general type, and a huge one of which `left` are reserved.
fn snap(left: u32, pods: usize, pool_capacity_types: &[&str]) -> Snapshot {
    let catalog = Catalog {
        region: "r".into(),
        instance_types: vec![
            itype("small.2x", 2000, 0.1, vec![]),
            itype(
                "huge.48x",
                48000,
                98.0,
                vec![reserved("cr-1", 98.0e-7, left)],
            ),
        ],
    };
    let requirements = vec![SelectorRequirement {
        key: labels::CAPACITY_TYPE.into(),
        operator: crate::requirements::Operator::In,
        values: pool_capacity_types.iter().map(|s| s.to_string()).collect(),
        min_values: None,
    }];
    Snapshot {
        node_pools: vec![NodePool {
            name: "default".into(),
            requirements,
            catalog: Arc::new(catalog),
            ..NodePool::default()
        }],
        pods: (0..pods)
            .map(|i| pending_pod(&format!("p{i}"), 1500))
            .collect(),
        ..Snapshot::default()
    }
}

fn plan(s: &Snapshot) -> Plan {
    provision(s, &Options::default())
}

fn requirement<'l>(l: &'l Launch, key: &str) -> Option<&'l SelectorRequirement> {
    l.requirements.iter().find(|r| r.key == key)
}

fn into_reservation(l: &Launch) -> Option<&str> {
    requirement(l, labels::CAPACITY_RESERVATION_ID).map(|r| r.values[0].as_str())
}

#[test]
fn claims_take_a_reservation_one_instance_each_and_no_more() {
    let p = plan(&snap(2, 100, &["on-demand", "spot", "reserved"]));
    assert!(p.unschedulable.is_empty(), "{:?}", p.unschedulable);
    let reserved: Vec<&Launch> = p
        .launches
        .iter()
        .filter(|l| l.capacity_type == CapacityType::Reserved)
        .collect();
    assert_eq!(reserved.len(), 2, "{:#?}", p.launches);
    for l in &reserved {
        assert_eq!(into_reservation(l), Some("cr-1"));
        assert_eq!(l.instance_type, "huge.48x");
        assert_eq!(l.instance_type_options, vec!["huge.48x".to_string()]);
        let ct = requirement(l, labels::CAPACITY_TYPE).unwrap();
        assert_eq!(ct.values, vec!["reserved".to_string()]);
    }
    // The rest were sized for what can be bought: never the huge type at its on-demand price,
    // never the reservation again.
    for l in p
        .launches
        .iter()
        .filter(|l| l.capacity_type != CapacityType::Reserved)
    {
        assert_eq!(l.instance_type, "small.2x", "{l:#?}");
        assert_eq!(into_reservation(l), None);
        let ct = requirement(l, labels::CAPACITY_TYPE).unwrap();
        assert!(!ct.values.contains(&"reserved".to_string()), "{ct:?}");
    }
    let placed: usize = p.launches.iter().map(|l| l.pods.len()).sum();
    assert_eq!(placed, 100);
}

#[test]
fn a_full_reservation_changes_nothing() {
    let with = plan(&snap(0, 10, &["on-demand", "spot", "reserved"]));
    assert!(
        with.launches
            .iter()
            .all(|l| l.capacity_type == CapacityType::Spot && into_reservation(l).is_none())
    );
    assert!(with.unschedulable.is_empty());
}

#[test]
fn a_pool_of_reserved_capacity_only_launches_no_more_than_the_reservation_holds() {
    let p = plan(&snap(1, 40, &["reserved"]));
    assert_eq!(p.launches.len(), 1, "{:#?}", p.launches);
    assert_eq!(into_reservation(&p.launches[0]), Some("cr-1"));
    // The 32 pods the reserved node holds are placed; the others wait with a reason.
    assert_eq!(p.launches[0].pods.len(), 32);
    assert_eq!(p.unschedulable.len(), 8);
    assert!(
        p.unschedulable
            .iter()
            .all(|u| u.reason.contains("capacity reservations are held in full")),
        "{:?}",
        p.unschedulable
    );
}

#[test]
fn a_pod_may_require_the_reservation_by_id() {
    let mut s = snap(3, 2, &["on-demand", "spot", "reserved"]);
    for pod in &mut s.pods {
        pod.spec
            .node_selector
            .insert(labels::CAPACITY_RESERVATION_ID.into(), "cr-1".into());
    }
    let p = plan(&s);
    assert!(p.unschedulable.is_empty(), "{:?}", p.unschedulable);
    assert!(
        p.launches
            .iter()
            .all(|l| into_reservation(l) == Some("cr-1"))
    );
    let mut other = snap(3, 1, &["on-demand", "spot", "reserved"]);
    other.pods[0]
        .spec
        .node_selector
        .insert(labels::CAPACITY_RESERVATION_ID.into(), "cr-other".into());
    assert_eq!(plan(&other).unschedulable.len(), 1);
}
