//! CreateFleet's per-override errors read into the offerings that failed for capacity and
//! the first other error. A launch into a placement group scopes its offerings by the group
//! (a full group does not stop launches outside it), and a spread group's per-zone instance
//! limit (EC2's message contains [`SPREAD_LIMIT`]) marks every candidate type of that zone,
//! since the limit is the group's, not the type's. A reserved launch's capacity error marks
//! the reservation it tried (as Karpenter marks the reservation, not the offering).

use aws_sdk_ec2::operation::create_fleet::CreateFleetOutput;
use aws_sdk_ec2::types::CreateFleetError;
use kerf_catalog::CapacityType;
use kerf_catalog::unavailable::OfferingKey;

use super::{LaunchRequest, is_capacity_code, override_zone, reservation_of};
use crate::error::ErrorInfo;

/// What EC2 says when a spread placement group has its seven instances in a zone.
pub const SPREAD_LIMIT: &str = "limit of instances in this spread placement group";

/// Whether an error is the spread group's per-zone limit.
pub fn is_spread_limit(e: &CreateFleetError) -> bool {
    e.error_message().is_some_and(|m| m.contains(SPREAD_LIMIT))
}

/// The offerings that failed for capacity (sorted, distinct) and the first other error.
pub(super) fn read_errors(
    out: &CreateFleetOutput,
    req: &LaunchRequest,
) -> (Vec<OfferingKey>, Option<ErrorInfo>) {
    let pg = req.placement_group.as_deref();
    let mut unavailable = Vec::new();
    let mut other: Option<ErrorInfo> = None;
    for e in out.errors() {
        let code = e.error_code().unwrap_or("Unknown");
        let ov = e
            .launch_template_and_overrides()
            .and_then(|l| l.overrides());
        let itype = ov
            .and_then(|o| o.instance_type())
            .map(|t| t.as_str().to_string());
        match (is_capacity_code(code), itype, override_zone(req, ov)) {
            (true, _, Some(z)) if pg.is_some() && is_spread_limit(e) => {
                unavailable.extend(zone_keys(req, &z));
            }
            (true, Some(t), Some(z)) if req.capacity_type == CapacityType::Reserved => {
                let id = reservation_of(req, &t, &z).map(|r| r.id.as_str());
                unavailable.push(OfferingKey::new(req.capacity_type, &t, &z).in_reservation(id));
            }
            (true, Some(t), Some(z)) => {
                unavailable.push(OfferingKey::new(req.capacity_type, &t, &z).in_group(pg));
            }
            _ => {
                let message = e.error_message().unwrap_or_default().to_string();
                other.get_or_insert(ErrorInfo {
                    operation: "CreateFleet",
                    code: code.into(),
                    message,
                });
            }
        }
    }
    unavailable.sort();
    unavailable.dedup();
    (unavailable, other)
}

/// Every candidate type of the request in `zone`, in the request's placement group.
fn zone_keys<'a>(req: &'a LaunchRequest, zone: &'a str) -> impl Iterator<Item = OfferingKey> + 'a {
    req.options
        .iter()
        .filter(move |o| o.zone == zone)
        .map(move |o| {
            OfferingKey::new(req.capacity_type, &o.instance_type, zone)
                .in_group(req.placement_group.as_deref())
        })
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use aws_sdk_ec2::types::{
        FleetLaunchTemplateOverrides, InstanceType, LaunchTemplateAndOverridesResponse,
    };
    use kerf_catalog::CapacityType;

    use super::*;
    use crate::fleet::LaunchOption;
    use crate::network::Subnet;

    fn req(pg: Option<&str>) -> LaunchRequest {
        let option = |t: &str, zone: &str| LaunchOption {
            instance_type: t.into(),
            zone: zone.into(),
            price: 1.0,
            launch_template: "lt".into(),
            reservation: None,
        };
        let subnet = |zone: &str| Subnet {
            id: format!("subnet-{zone}"),
            zone: zone.into(),
            zone_id: String::new(),
            available_ips: 10,
        };
        LaunchRequest {
            cluster: "demo".into(),
            nodeclaim_name: "nc".into(),
            nodeclaim_uid: "uid".into(),
            nodepool: "default".into(),
            nodeclass: "default".into(),
            capacity_type: CapacityType::OnDemand,
            options: vec![
                option("c5.large", "a"),
                option("m5.large", "a"),
                option("m5.large", "b"),
            ],
            subnets: BTreeMap::from([("a".into(), subnet("a")), ("b".into(), subnet("b"))]),
            tags: BTreeMap::new(),
            prioritized: false,
            placement_group: pg.map(str::to_string),
        }
    }

    fn error(itype: &str, zone: &str, message: &str) -> CreateFleetError {
        let ov = FleetLaunchTemplateOverrides::builder()
            .instance_type(InstanceType::from(itype))
            .availability_zone(zone)
            .build();
        CreateFleetError::builder()
            .error_code("InsufficientInstanceCapacity")
            .error_message(message)
            .launch_template_and_overrides(
                LaunchTemplateAndOverridesResponse::builder()
                    .overrides(ov)
                    .build(),
            )
            .build()
    }

    fn out(errors: Vec<CreateFleetError>) -> CreateFleetOutput {
        CreateFleetOutput::builder()
            .set_errors(Some(errors))
            .build()
    }

    const SPREAD: &str = "You've reached the limit of instances in this spread placement group. \
        A spread placement group can have up to seven instances per Availability Zone.";

    #[test]
    fn capacity_errors_in_a_group_are_scoped_by_it() {
        let (keys, other) = read_errors(
            &out(vec![error("m5.large", "b", "no capacity")]),
            &req(Some("pg-0abc")),
        );
        let want =
            OfferingKey::new(CapacityType::OnDemand, "m5.large", "b").in_group(Some("pg-0abc"));
        assert_eq!(keys, [want]);
        assert_eq!(other, None);
        let (keys, _) = read_errors(
            &out(vec![error("m5.large", "b", "no capacity")]),
            &req(None),
        );
        assert_eq!(keys[0].placement_group, None);
    }

    #[test]
    fn a_full_spread_group_marks_every_candidate_of_the_zone() {
        let (keys, _) = read_errors(
            &out(vec![error("m5.large", "a", SPREAD)]),
            &req(Some("pg-0abc")),
        );
        let names: Vec<(&str, &str)> = keys
            .iter()
            .map(|k| (k.instance_type.as_str(), k.zone.as_str()))
            .collect();
        assert_eq!(names, [("c5.large", "a"), ("m5.large", "a")]);
        assert!(
            keys.iter()
                .all(|k| k.placement_group.as_deref() == Some("pg-0abc"))
        );
        let (outside, _) = read_errors(&out(vec![error("m5.large", "a", SPREAD)]), &req(None));
        assert_eq!(
            outside.len(),
            1,
            "without a group only the override is marked"
        );
    }

    #[test]
    fn a_reserved_launch_marks_the_reservation_it_tried() {
        let mut r = req(None);
        r.capacity_type = CapacityType::Reserved;
        r.options[2].reservation = Some(kerf_catalog::reservation::ReservedOffering {
            id: "cr-0b".into(),
            kind: kerf_catalog::reservation::ReservationKind::Default,
            interruptible: false,
            capacity: 1,
        });
        let (keys, other) = read_errors(&out(vec![error("m5.large", "b", "full")]), &r);
        let want =
            OfferingKey::new(CapacityType::Reserved, "m5.large", "b").in_reservation(Some("cr-0b"));
        assert_eq!((keys, other), (vec![want], None));
    }
}
