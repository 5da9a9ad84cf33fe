//! EC2NodeClass status: what each class selects now (subnets, security groups, AMIs,
//! instance profile), the conditions the cloud reports beside them (`PlacementGroupReady`,
//! and `CapacityReservationsReady` with the `ReservedCapacity` gate on) and `Ready`, which
//! they are part of, written as Karpenter's node class controller writes
//! them. Drift reads it: a node whose AMI, subnet or security group is no
//! longer selected has drifted. Written only when it changed.

use kerf_api::v1::{Condition, ConditionStatus, EC2NodeClass, EC2NodeClassStatus};
use serde_json::json;

use crate::claim::{condition, upsert_conditions};
use crate::ctx::Ctx;
use crate::log::{controllers::NODECLASS, obj};
use crate::names::conditions::READY;
use crate::ports::{Cloud, CloudError, Cluster, Publisher};

/// Whether two statuses select the same things (conditions compared by type and status).
fn same(a: &EC2NodeClassStatus, b: &EC2NodeClassStatus) -> bool {
    let strip = |s: &EC2NodeClassStatus| EC2NodeClassStatus {
        conditions: Vec::new(),
        ..s.clone()
    };
    let conds = |s: &EC2NodeClassStatus| -> Vec<(String, ConditionStatus, String)> {
        s.conditions
            .iter()
            .map(|c| (c.type_.clone(), c.status, c.reason.clone()))
            .collect()
    };
    strip(a) == strip(b) && conds(a) == conds(b)
}

/// `Ready` from the conditions it depends on: True when all are, else False naming those
/// that are not (operatorpkg's `UnhealthyDependents`).
fn ready(dependents: &[Condition]) -> Condition {
    let unhealthy: Vec<String> = dependents
        .iter()
        .filter(|c| c.status != ConditionStatus::True)
        .map(|c| format!("{}={:?}", c.type_, c.status))
        .collect();
    if unhealthy.is_empty() {
        condition(READY, ConditionStatus::True, READY, "")
    } else {
        let msg = unhealthy.join(", ");
        condition(READY, ConditionStatus::False, "UnhealthyDependents", &msg)
    }
}

/// The status to write after resolving `class` (`Err`: why it is not ready).
fn next(
    current: Option<&EC2NodeClassStatus>,
    resolved: Result<EC2NodeClassStatus, CloudError>,
    now: jiff::Timestamp,
) -> EC2NodeClassStatus {
    let old = current.cloned().unwrap_or_default();
    let (mut s, updates) = match resolved {
        Ok(mut s) => {
            let mut updates = std::mem::take(&mut s.conditions);
            updates.push(ready(&updates));
            (s, updates)
        }
        Err(e) => (
            EC2NodeClassStatus {
                conditions: Vec::new(),
                ..old.clone()
            },
            vec![condition(
                READY,
                ConditionStatus::False,
                e.reason(),
                &e.to_string(),
            )],
        ),
    };
    s.conditions = upsert_conditions(&old.conditions, &updates, now);
    s
}

/// `class` with the placement group its catalog was built for, when the catalog was read
/// (the cloud labels every type of a class's catalog with the group it resolved): drift
/// compares it with the nodes' `karpenter.k8s.aws/placement-group-id`.
pub fn with_placement_group(
    mut class: kerf_engine::model::NodeClass,
    catalogs: &std::collections::BTreeMap<String, std::sync::Arc<kerf_catalog::Catalog>>,
) -> kerf_engine::model::NodeClass {
    let catalog = catalogs.get(&class.name);
    if let Some(id) = catalog.and_then(|c| kerf_catalog::placement::group_id(c)) {
        class.placement_group = kerf_engine::model::ResolvedPlacementGroup::Group(id.into());
    }
    class
}

/// Whether AMIs may change at `now` under `cadence` ([`crate::ctx::Settings::ami_refresh`]).
fn ami_refresh_due(cadence: Option<jiff::SignedDuration>, now: jiff::Timestamp) -> bool {
    const WINDOW: i64 = 10;
    cadence.is_none_or(|p| now.as_second().rem_euclid(p.as_secs().max(WINDOW)) < WINDOW)
}

/// Refreshes the status of every class; returns how many changed.
pub async fn refresh<C: Cluster, K: Cloud, P: Publisher>(
    ctx: &Ctx<C, K, P>,
    classes: &[EC2NodeClass],
) -> usize {
    let mut changed = 0;
    for class in classes
        .iter()
        .filter(|c| c.metadata.deletion_timestamp.is_none())
    {
        let name = class.metadata.name.clone().unwrap_or_default();
        let resolved = ctx.cloud.node_class_status(class).await;
        if let Err(e) = &resolved
            && e.is_retryable()
        {
            ctx.log.warn(
                NODECLASS,
                "could not resolve ec2nodeclass",
                json!({"EC2NodeClass": obj(&name), "error": e.to_string()}),
            );
            continue;
        }
        let mut status = next(class.status.as_ref(), resolved, ctx.now());
        if let Some(cur) = class.status.as_ref().filter(|c| !c.amis.is_empty())
            && !ami_refresh_due(ctx.settings.ami_refresh, ctx.now())
        {
            status.amis = cur.amis.clone();
        }
        if class.status.as_ref().is_some_and(|cur| same(cur, &status)) {
            continue;
        }
        match ctx.cluster.patch_node_class_status(&name, &status).await {
            Ok(_) => {
                changed += 1;
                ctx.log.info(
                    NODECLASS,
                    "updated ec2nodeclass status",
                    json!({"EC2NodeClass": obj(&name),
                    "amis": status.amis.iter().map(|a| a.id.clone()).collect::<Vec<_>>()}),
                );
            }
            Err(e) => ctx.log.warn(
                NODECLASS,
                "could not write ec2nodeclass status",
                json!({"EC2NodeClass": obj(&name), "error": e.to_string()}),
            ),
        }
    }
    changed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn amis_change_every_pass_or_at_karpenters_cadence() {
        let at = |s: &str| s.parse::<jiff::Timestamp>().unwrap();
        let five = Some(jiff::SignedDuration::from_mins(5));
        assert!(ami_refresh_due(None, at("2026-01-01T00:03:17Z")));
        assert!(ami_refresh_due(five, at("2026-01-01T00:05:09Z")));
        assert!(!ami_refresh_due(five, at("2026-01-01T00:05:10Z")));
        assert!(!ami_refresh_due(five, at("2026-01-01T00:09:59Z")));
        assert!(ami_refresh_due(five, at("2026-01-01T00:10:00Z")));
    }
    use kerf_api::v1::ec2nodeclass_status::Ami;

    fn status(ami: &str) -> EC2NodeClassStatus {
        EC2NodeClassStatus {
            amis: vec![Ami {
                id: ami.into(),
                ..Ami::default()
            }],
            ..EC2NodeClassStatus::default()
        }
    }

    #[test]
    fn ready_on_success_not_ready_with_the_reason_on_failure() {
        let t0 = "2026-01-01T00:00:00Z".parse().unwrap();
        let ok = next(None, Ok(status("ami-1")), t0);
        assert_eq!(ok.conditions[0].status, ConditionStatus::True);
        assert!(same(&ok, &next(Some(&ok), Ok(status("ami-1")), t0)));
        assert!(
            !same(&ok, &next(Some(&ok), Ok(status("ami-2")), t0)),
            "a new AMI is a change"
        );
        let bad = next(
            Some(&ok),
            Err(CloudError::NodeClassNotReady("no subnet".into())),
            t0,
        );
        assert_eq!(
            (bad.conditions[0].status, bad.conditions[0].reason.as_str()),
            (ConditionStatus::False, "NodeClassNotReady")
        );
        assert_eq!(bad.amis, ok.amis, "what was resolved before is kept");
    }

    fn with_placement(truth: ConditionStatus, reason: &str) -> EC2NodeClassStatus {
        let pg = crate::names::class_conditions::PLACEMENT_GROUP_READY;
        EC2NodeClassStatus {
            conditions: vec![condition(pg, truth, reason, "")],
            ..status("ami-1")
        }
    }

    fn find<'a>(s: &'a EC2NodeClassStatus, t: &str) -> &'a Condition {
        s.conditions.iter().find(|c| c.type_ == t).unwrap()
    }

    #[test]
    fn a_placement_group_not_found_makes_the_class_not_ready() {
        let t0 = "2026-01-01T00:00:00Z".parse().unwrap();
        let pg = crate::names::class_conditions::PLACEMENT_GROUP_READY;
        let ok = next(None, Ok(with_placement(ConditionStatus::True, pg)), t0);
        assert_eq!(find(&ok, READY).status, ConditionStatus::True);
        assert_eq!(find(&ok, pg).status, ConditionStatus::True);
        let missing = with_placement(ConditionStatus::False, "PlacementGroupNotFound");
        let bad = next(Some(&ok), Ok(missing), t0);
        assert_eq!(find(&bad, pg).reason, "PlacementGroupNotFound");
        let r = find(&bad, READY);
        assert_eq!(
            (r.status, r.reason.as_str()),
            (ConditionStatus::False, "UnhealthyDependents")
        );
        assert!(
            r.message.contains("PlacementGroupReady=False"),
            "{}",
            r.message
        );
        assert!(!same(&ok, &bad));
        let failed = with_placement(ConditionStatus::False, "PlacementGroupResolutionFailed");
        assert!(
            !same(&bad, &next(Some(&bad), Ok(failed), t0)),
            "a new reason is a change"
        );
    }

    #[test]
    fn capacity_reservations_not_discovered_make_the_class_not_ready() {
        let t0 = "2026-01-01T00:00:00Z".parse().unwrap();
        let pg = crate::names::class_conditions::PLACEMENT_GROUP_READY;
        let cr = crate::names::class_conditions::CAPACITY_RESERVATIONS_READY;
        let with = |truth, reason: &str| EC2NodeClassStatus {
            conditions: vec![
                condition(pg, ConditionStatus::True, pg, ""),
                condition(cr, truth, reason, ""),
            ],
            ..status("ami-1")
        };
        let ok = next(None, Ok(with(ConditionStatus::True, cr)), t0);
        assert_eq!(find(&ok, READY).status, ConditionStatus::True);
        let failed = with(
            ConditionStatus::False,
            "CapacityReservationsResolutionFailed",
        );
        let bad = next(Some(&ok), Ok(failed), t0);
        let r = find(&bad, READY);
        assert_eq!(r.status, ConditionStatus::False);
        assert!(
            r.message.contains("CapacityReservationsReady=False"),
            "{}",
            r.message
        );
        assert!(!same(&ok, &bad));
    }
}
