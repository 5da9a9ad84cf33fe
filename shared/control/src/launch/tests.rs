//! Tests of launch requests: type filtering, capacity-type choice, truncation, partitions.

use super::*;
use kerf_catalog::Offering;
use serde_json::json;

fn it(
    name: &str,
    cpu: &str,
    arch: &str,
    offers: &[(&str, CapacityType, f64, bool)],
) -> InstanceType {
    let alloc = Resources::parse([("cpu", cpu), ("memory", "8Gi"), ("pods", "29")]).unwrap();
    InstanceType {
        name: name.into(),
        labels: BTreeMap::from([
            (INSTANCE_TYPE.to_string(), name.to_string()),
            ("kubernetes.io/arch".to_string(), arch.to_string()),
        ]),
        capacity: alloc.clone(),
        overhead: Default::default(),
        allocatable: alloc,
        ebs_volume_limit: None,
        offerings: offers
            .iter()
            .map(|(z, ct, p, a)| Offering {
                zone: z.to_string(),
                capacity_type: *ct,
                price: *p,
                available: *a,
                partition: None,
                reservation: None,
            })
            .collect(),
    }
}

fn catalog() -> Catalog {
    use CapacityType::*;
    Catalog {
        region: "us-west-2".into(),
        instance_types: vec![
            it(
                "m5.large",
                "1930m",
                "amd64",
                &[
                    ("a", OnDemand, 0.096, true),
                    ("a", Spot, 0.03, false),
                    ("b", Spot, 0.035, true),
                ],
            ),
            it(
                "c5.large",
                "1930m",
                "amd64",
                &[("a", OnDemand, 0.085, true), ("b", Spot, 0.031, true)],
            ),
            it(
                "m6g.large",
                "1930m",
                "arm64",
                &[("a", OnDemand, 0.077, true), ("a", Spot, 0.02, true)],
            ),
            it(
                "m5.xlarge",
                "3920m",
                "amd64",
                &[("a", OnDemand, 0.192, true), ("a", Spot, 0.07, true)],
            ),
        ],
    }
}

fn claim(reqs: serde_json::Value, cpu: &str) -> NodeClaim {
    serde_json::from_value(json!({"apiVersion": "karpenter.sh/v1", "kind": "NodeClaim",
        "metadata": {"name": "default-x", "uid": "uid-1", "labels": {"karpenter.sh/nodepool": "default"}},
        "spec": {"requirements": reqs, "resources": {"requests": {"cpu": cpu, "pods": "2"}},
            "taints": [{"key": "t", "value": "v", "effect": "NoSchedule"}],
            "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"}}}))
    .unwrap()
}

fn class() -> Arc<EC2NodeClass> {
    Arc::new(serde_json::from_value(json!({"apiVersion": "karpenter.k8s.aws/v1", "kind": "EC2NodeClass",
        "metadata": {"name": "default"}, "spec": {"role": "r", "amiSelectorTerms": [{"alias": "al2023@latest"}],
        "subnetSelectorTerms": [{"tags": {"a": "b"}}], "securityGroupSelectorTerms": [{"tags": {"a": "b"}}]}}))
    .unwrap())
}

#[test]
fn spot_first_cheapest_first_available_only() {
    let c = claim(
        json!([{"key": "kubernetes.io/arch", "operator": "In", "values": ["amd64"]}]),
        "1",
    );
    let r = request(&c, class(), &catalog(), 60).unwrap();
    assert_eq!(r.capacity_type, CapacityType::Spot);
    let got: Vec<(&str, &str)> = r
        .options
        .iter()
        .map(|o| (o.instance_type.as_str(), o.zone.as_str()))
        .collect();
    assert_eq!(
        got,
        [("c5.large", "b"), ("m5.large", "b"), ("m5.xlarge", "a")],
        "arm64 and the unavailable offering left out"
    );
    assert_eq!(r.node_claim_uid, "uid-1");
    assert_eq!(r.node_pool, "default");
    assert_eq!(r.labels["karpenter.sh/capacity-type"], "spot");
    assert_eq!(r.labels["kubernetes.io/arch"], "amd64");
    assert_eq!(r.taints[0].key, "t");
}

#[test]
fn on_demand_when_spot_is_not_allowed_and_requests_filter_types() {
    let c = claim(
        json!([{"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["on-demand"]},
               {"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["a"]}]),
        "3",
    );
    let r = request(&c, class(), &catalog(), 60).unwrap();
    assert_eq!(r.capacity_type, CapacityType::OnDemand);
    let names: Vec<&str> = r.options.iter().map(|o| o.instance_type.as_str()).collect();
    assert_eq!(names, ["m5.xlarge"], "only the type with room for 3 cpu");
}

#[test]
fn truncation_keeps_whole_types_and_errors_are_typed() {
    let c = claim(json!([]), "1");
    let r = request(&c, class(), &catalog(), 2).unwrap();
    let mut types: Vec<&str> = r.options.iter().map(|o| o.instance_type.as_str()).collect();
    types.dedup();
    assert_eq!(types, ["m6g.large", "c5.large"]);
    let big = claim(json!([]), "64");
    assert_eq!(
        request(&big, class(), &catalog(), 60).unwrap_err(),
        RequestError::NoInstanceType
    );
    let nowhere = claim(
        json!([{"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["z"]}]),
        "1",
    );
    assert_eq!(
        request(&nowhere, class(), &catalog(), 60).unwrap_err(),
        RequestError::NoOffering
    );
}

#[test]
fn launched_status_and_labels() {
    let c = claim(json!([]), "1");
    let l = Launched {
        instance_id: "i-1".into(),
        provider_id: "aws:///a/i-1".into(),
        instance_type: "m5.large".into(),
        zone: "a".into(),
        capacity_type: CapacityType::OnDemand,
        image_id: Some("ami-1".into()),
        unavailable: vec![],
        reservation: None,
    };
    let now = "2026-01-01T00:00:00Z".parse().unwrap();
    let s = launched_status(&c, &l, &catalog(), now);
    assert_eq!(s.provider_id.as_deref(), Some("aws:///a/i-1"));
    assert_eq!(s.allocatable["cpu"].0, "1930m");
    let types: Vec<(&str, ConditionStatus)> = s
        .conditions
        .iter()
        .map(|c| (c.type_.as_str(), c.status))
        .collect();
    assert!(types.contains(&("Launched", ConditionStatus::True)));
    assert!(types.contains(&("Registered", ConditionStatus::Unknown)));
    assert!(types.contains(&("Ready", ConditionStatus::Unknown)));
    let labels = launched_labels(&l, &catalog(), &BTreeMap::new());
    assert_eq!(labels["node.kubernetes.io/instance-type"], "m5.large");
    assert_eq!(labels["topology.kubernetes.io/zone"], "a");
    assert_eq!(labels["karpenter.sh/capacity-type"], "on-demand");
    assert_eq!(labels["topology.kubernetes.io/region"], "us-west-2");
}

/// The catalog in partition group `pg-0abc` of three partitions, as the adapter builds it.
fn partitioned() -> Catalog {
    let mut c = catalog();
    let pg = kerf_catalog::placement::PlacementGroup {
        id: "pg-0abc".into(),
        name: "kafka".into(),
        strategy: kerf_catalog::placement::Strategy::Partition,
        partition_count: 3,
    };
    kerf_catalog::placement::apply(&mut c, &pg, |_| None);
    c
}

#[test]
fn partitions_share_one_option_and_the_lowest_asked_is_launched() {
    let any = claim(
        json!([{"key": "kubernetes.io/arch", "operator": "In", "values": ["amd64"]}]),
        "1",
    );
    let r = request(&any, class(), &partitioned(), 60).unwrap();
    assert_eq!(
        r.options.len(),
        3,
        "one override per type and zone, whatever the partitions"
    );
    assert!(
        !r.labels.contains_key(PLACEMENT_GROUP_PARTITION),
        "EC2 picks"
    );
    let some = claim(
        json!([{"key": PLACEMENT_GROUP_PARTITION, "operator": "In", "values": ["3", "2"]}]),
        "1",
    );
    let r = request(&some, class(), &partitioned(), 60).unwrap();
    assert_eq!(r.labels[PLACEMENT_GROUP_PARTITION], "2");
    let not_one = claim(
        json!([{"key": PLACEMENT_GROUP_PARTITION, "operator": "NotIn", "values": ["1"]}]),
        "1",
    );
    let r = request(&not_one, class(), &partitioned(), 60).unwrap();
    assert_eq!(r.labels[PLACEMENT_GROUP_PARTITION], "2");
    let nowhere = claim(
        json!([{"key": PLACEMENT_GROUP_PARTITION, "operator": "In", "values": ["9"]}]),
        "1",
    );
    assert_eq!(
        request(&nowhere, class(), &partitioned(), 60).unwrap_err(),
        RequestError::NoOffering
    );
    assert_eq!(
        request(&some, class(), &catalog(), 60).unwrap_err(),
        RequestError::NoOffering,
        "no partition outside a partition group"
    );
}

#[test]
fn a_claim_in_a_partition_group_is_labelled_with_the_group_and_partition() {
    let l = Launched {
        instance_id: "i-1".into(),
        provider_id: "aws:///a/i-1".into(),
        instance_type: "m5.large".into(),
        zone: "a".into(),
        capacity_type: CapacityType::OnDemand,
        image_id: None,
        unavailable: vec![],
        reservation: None,
    };
    let asked = BTreeMap::from([(PLACEMENT_GROUP_PARTITION.to_string(), "2".to_string())]);
    let labels = launched_labels(&l, &partitioned(), &asked);
    assert_eq!(labels[crate::names::PLACEMENT_GROUP_ID], "pg-0abc");
    assert_eq!(labels[PLACEMENT_GROUP_PARTITION], "2");
    let unasked = launched_labels(&l, &partitioned(), &BTreeMap::new());
    assert_eq!(
        unasked[PLACEMENT_GROUP_PARTITION], "",
        "filled at registration"
    );
    let outside = launched_labels(&l, &catalog(), &asked);
    assert!(!outside.contains_key(PLACEMENT_GROUP_PARTITION));
    assert!(!outside.contains_key(crate::names::PLACEMENT_GROUP_ID));
}

/// The catalog with two reservations of `m5.large`: `cr-a` in zone a with room, `cr-full`
/// in zone b without.
fn reserved() -> Catalog {
    use kerf_catalog::reservation::{MatchCriteria, Reservation, ReservationKind, offer};
    let r = |id: &str, zone: &str, available| Reservation {
        id: id.into(),
        instance_type: "m5.large".into(),
        zone: zone.into(),
        owner_id: "012345678901".into(),
        match_criteria: MatchCriteria::Targeted,
        kind: ReservationKind::Default,
        interruptible: false,
        end_time: None,
        available,
    };
    let now = "2026-01-01T00:00:00Z".parse().unwrap();
    let mut c = catalog();
    c.instance_types[0].offerings.push(Offering {
        zone: "b".into(),
        capacity_type: CapacityType::OnDemand,
        price: 0.096,
        available: true,
        partition: None,
        reservation: None,
    });
    offer(c, &[r("cr-a", "a", 2), r("cr-full", "b", 0)], now)
}

#[test]
fn a_reservation_with_room_comes_first_and_names_itself() {
    let c = claim(json!([]), "1");
    let r = request(&c, class(), &reserved(), 60).unwrap();
    assert_eq!(r.capacity_type, CapacityType::Reserved);
    assert_eq!(r.options.len(), 1, "{:?}", r.options);
    assert_eq!(r.options[0].instance_type, "m5.large");
    assert_eq!(r.options[0].zone, "a");
    assert_eq!(r.options[0].reservation.as_ref().unwrap().id, "cr-a");
    assert_eq!(r.labels["karpenter.sh/capacity-type"], "reserved");
    // Not allowed to use reservations: spot as before, no reservation on any option.
    let spot = claim(
        json!([{"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["spot", "on-demand"]}]),
        "1",
    );
    let r = request(&spot, class(), &reserved(), 60).unwrap();
    assert_eq!(r.capacity_type, CapacityType::Spot);
    assert!(r.options.iter().all(|o| o.reservation.is_none()));
    // A requirement on another reservation leaves only purchases; one on the full one too.
    for id in ["cr-other", "cr-full"] {
        let other = claim(
            json!([{"key": "karpenter.k8s.aws/capacity-reservation-id", "operator": "In", "values": [id]}]),
            "1",
        );
        assert_eq!(
            request(&other, class(), &reserved(), 60).unwrap_err(),
            RequestError::NoOffering,
            "{id}: only reserved offerings carry the label"
        );
    }
}

#[test]
fn a_reserved_launch_labels_the_claim_with_its_reservation() {
    let l = Launched {
        instance_id: "i-1".into(),
        provider_id: "aws:///a/i-1".into(),
        instance_type: "m5.large".into(),
        zone: "a".into(),
        capacity_type: CapacityType::Reserved,
        image_id: None,
        unavailable: vec![],
        reservation: Some(kerf_catalog::reservation::ReservedOffering {
            id: "cr-a".into(),
            kind: kerf_catalog::reservation::ReservationKind::CapacityBlock,
            interruptible: true,
            capacity: 2,
        }),
    };
    let labels = launched_labels(&l, &reserved(), &BTreeMap::new());
    assert_eq!(labels["karpenter.sh/capacity-type"], "reserved");
    assert_eq!(labels["karpenter.k8s.aws/capacity-reservation-id"], "cr-a");
    assert_eq!(
        labels["karpenter.k8s.aws/capacity-reservation-type"],
        "capacity-block"
    );
    assert_eq!(
        labels["karpenter.k8s.aws/capacity-reservation-interruptible"],
        "true"
    );
    let plain = Launched {
        reservation: None,
        capacity_type: CapacityType::OnDemand,
        ..l
    };
    let labels = launched_labels(&plain, &reserved(), &BTreeMap::new());
    assert!(!labels.contains_key("karpenter.k8s.aws/capacity-reservation-id"));
}

#[test]
fn a_claim_requesting_efa_asks_the_cloud_for_efa_interfaces() {
    let mut efa = it(
        "c5n.18xlarge",
        "71750m",
        "amd64",
        &[("a", CapacityType::OnDemand, 3.888, true)],
    );
    efa.capacity.set(EFA, 1000);
    efa.allocatable.set(EFA, 1000);
    let mut c = catalog();
    c.instance_types.push(efa);
    let plain = claim(json!([]), "1");
    assert!(!request(&plain, class(), &c, 60).unwrap().efa_requested);
    let mut asking = plain;
    asking
        .spec
        .resources
        .requests
        .insert(EFA.into(), Quantity("1".into()));
    let r = request(&asking, class(), &c, 60).unwrap();
    assert!(r.efa_requested);
    let names: Vec<&str> = r.options.iter().map(|o| o.instance_type.as_str()).collect();
    assert_eq!(names, ["c5n.18xlarge"], "only the type with an EFA");
}
