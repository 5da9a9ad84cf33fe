//! What disruption planning needs from Kubernetes objects: pod metadata and status (owner,
//! priority, readiness, annotations), NodeClaim status (conditions, times, image),
//! NodePool disruption settings and budgets, PodDisruptionBudgets and EC2NodeClass status.

use k8s_openapi::api::core::v1 as core;
use k8s_openapi::api::policy::v1 as policy;
use kerf_api::v1 as karpenter;
use kerf_engine::model::{
    Ami, Budget, BudgetNodes, Condition, ConditionStatus, ConsolidationPolicy, DisruptionReason,
    NodeClaim, NodeClass, OwnerKind, Pdb, Pod, PoolDisruption, ResolvedPlacementGroup,
};
use kerf_engine::requirements::{Operator, SelectorRequirement};
use kerf_engine::time::{parse_duration, parse_rfc3339};

use super::timestamp;
use crate::FieldError;

/// Fills a pod's annotations, priority, start time, readiness and owner.
pub fn pod_status(p: &core::Pod, out: &mut Pod) {
    let m = &p.metadata;
    out.annotations = m.annotations.clone().unwrap_or_default();
    if let Some(s) = &p.spec {
        out.priority = s.priority.unwrap_or(0);
        out.priority_class = s.priority_class_name.clone().unwrap_or_default();
    }
    let status = p.status.as_ref();
    out.start_time = status.and_then(|s| s.start_time.as_ref()).map(timestamp);
    let conditions = status.and_then(|s| s.conditions.as_ref());
    out.ready = match conditions.and_then(|cs| cs.iter().find(|c| c.type_ == "Ready")) {
        Some(c) => c.status == "True",
        // Pods that report no readiness (hand-written inputs) count as ready.
        None => true,
    };
    out.owner = m
        .owner_references
        .iter()
        .flatten()
        .next()
        .map_or(OwnerKind::None, |o| OwnerKind::parse(&o.kind));
    out.mirror = out.annotations.contains_key(kerf_labels::MIRROR_POD);
}

/// Whether a node's `Ready` condition is True (a node with no conditions counts as ready).
pub fn node_ready(n: &core::Node) -> bool {
    let conditions = n.status.as_ref().and_then(|s| s.conditions.as_ref());
    match conditions.and_then(|cs| cs.iter().find(|c| c.type_ == "Ready")) {
        Some(c) => c.status == "True",
        None => true,
    }
}

/// Fills a NodeClaim's creation time, annotations, conditions, times, image and lifetime.
pub fn claim_status(c: &karpenter::NodeClaim, out: &mut NodeClaim) -> Result<(), FieldError> {
    let m = &c.metadata;
    out.created = m.creation_timestamp.as_ref().map(timestamp).unwrap_or(0);
    out.annotations = m.annotations.clone().unwrap_or_default();
    out.nominated_until = out
        .annotations
        .get(kerf_labels::NOMINATED_UNTIL)
        .and_then(|v| parse_rfc3339(v));
    out.expire_after = nillable("spec.expireAfter", &c.spec.expire_after)?;
    out.termination_grace_period = c
        .spec
        .termination_grace_period
        .as_deref()
        .map(|s| duration("spec.terminationGracePeriod", s))
        .transpose()?;
    out.node_class = c.spec.node_class_ref.name.clone();
    let Some(status) = &c.status else {
        return Ok(());
    };
    out.image_id = status.image_id.clone().unwrap_or_default();
    out.last_pod_event = status
        .last_pod_event_time
        .as_deref()
        .map(|s| time("status.lastPodEventTime", s))
        .transpose()?;
    out.conditions = status
        .conditions
        .iter()
        .enumerate()
        .map(|(i, k)| condition(k, &format!("status.conditions[{i}]")))
        .collect::<Result<_, _>>()?;
    Ok(())
}

fn condition(c: &karpenter::Condition, f: &str) -> Result<Condition, FieldError> {
    Ok(Condition {
        kind: c.type_.clone(),
        status: match c.status {
            karpenter::ConditionStatus::True => ConditionStatus::True,
            karpenter::ConditionStatus::False => ConditionStatus::False,
            karpenter::ConditionStatus::Unknown => ConditionStatus::Unknown,
        },
        reason: c.reason.clone(),
        since: time(&format!("{f}.lastTransitionTime"), &c.last_transition_time)?,
    })
}

fn time(f: &str, s: &str) -> Result<i64, FieldError> {
    parse_rfc3339(s).ok_or_else(|| FieldError::new(f, format!("not an RFC 3339 time: {s:?}")))
}

/// A duration (`1h30m`).
pub fn duration(f: &str, s: &str) -> Result<i64, FieldError> {
    parse_duration(s).ok_or_else(|| FieldError::new(f, format!("invalid duration {s:?}")))
}

/// A duration or `Never` (`None`).
pub fn nillable(f: &str, s: &str) -> Result<Option<i64>, FieldError> {
    if s == "Never" {
        return Ok(None);
    }
    duration(f, s).map(Some)
}

/// A NodePool's `spec.disruption`.
pub fn pool_disruption(d: &karpenter::Disruption) -> Result<PoolDisruption, FieldError> {
    Ok(PoolDisruption {
        policy: match d.consolidation_policy {
            karpenter::ConsolidationPolicy::WhenEmpty => ConsolidationPolicy::WhenEmpty,
            karpenter::ConsolidationPolicy::WhenEmptyOrUnderutilized => {
                ConsolidationPolicy::WhenEmptyOrUnderutilized
            }
            karpenter::ConsolidationPolicy::Balanced => ConsolidationPolicy::Balanced,
        },
        consolidate_after: nillable("spec.disruption.consolidateAfter", &d.consolidate_after)?,
        budgets: d
            .budgets
            .iter()
            .enumerate()
            .map(|(i, b)| budget(b, &format!("spec.disruption.budgets[{i}]")))
            .collect::<Result<_, _>>()?,
    })
}

fn budget(b: &karpenter::Budget, f: &str) -> Result<Budget, FieldError> {
    let bad = || FieldError::new(format!("{f}.nodes"), format!("invalid value {:?}", b.nodes));
    let nodes = match b.nodes.strip_suffix('%') {
        Some(p) => BudgetNodes::Percent(p.parse().ok().filter(|p| *p <= 100).ok_or_else(bad)?),
        None => BudgetNodes::Count(b.nodes.parse().map_err(|_| bad())?),
    };
    if b.schedule.is_some() != b.duration.is_some() {
        return Err(FieldError::new(f, "'schedule' must be set with 'duration'"));
    }
    Ok(Budget {
        nodes,
        schedule: b.schedule.clone(),
        duration: b
            .duration
            .as_deref()
            .map(|d| duration(&format!("{f}.duration"), d))
            .transpose()?,
        reasons: b
            .reasons
            .iter()
            .map(|r| match r {
                karpenter::DisruptionReason::Empty => DisruptionReason::Empty,
                karpenter::DisruptionReason::Drifted => DisruptionReason::Drifted,
                karpenter::DisruptionReason::Underutilized => DisruptionReason::Underutilized,
            })
            .collect(),
    })
}

/// A PodDisruptionBudget with the status the API server reports.
pub fn pdb(b: &policy::PodDisruptionBudget) -> Result<Pdb, FieldError> {
    let spec = b.spec.clone().unwrap_or_default();
    let selector = spec
        .selector
        .as_ref()
        .map(|s| crate::pod::selector(Some(s), "spec.selector"))
        .transpose()?;
    Ok(Pdb {
        namespace: b
            .metadata
            .namespace
            .clone()
            .unwrap_or_else(|| "default".into()),
        name: b
            .metadata
            .name
            .clone()
            .ok_or_else(|| FieldError::new("metadata.name", "missing"))?,
        selector,
        disruptions_allowed: b
            .status
            .as_ref()
            .and_then(|s| s.disruptions_allowed)
            .unwrap_or(0),
        unhealthy_always_allow: spec.unhealthy_pod_eviction_policy.as_deref()
            == Some("AlwaysAllow"),
        blocks_all: blocks_all(&spec),
    })
}

/// `maxUnavailable: 0` or `0%`, or `minAvailable: 100%`, as Karpenter reads a budget that
/// never lets a pod go.
fn blocks_all(spec: &policy::PodDisruptionBudgetSpec) -> bool {
    use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
    let none_unavailable = match &spec.max_unavailable {
        Some(IntOrString::Int(0)) => true,
        Some(IntOrString::String(s)) => s.trim() == "0%",
        _ => false,
    };
    let all_available =
        matches!(&spec.min_available, Some(IntOrString::String(s)) if s.trim() == "100%");
    none_unavailable || all_available
}

/// An EC2NodeClass as drift reads it: Kerf's hash and the AMIs, subnets and security
/// groups its `status` says are selected now. Its placement group is known here only when
/// it selects none: the cloud resolves a selector (the control layer fills it in).
pub fn node_class(nc: &karpenter::EC2NodeClass) -> Result<NodeClass, FieldError> {
    let status = nc.status.clone().unwrap_or_default();
    let amis = status
        .amis
        .iter()
        .enumerate()
        .map(|(i, a)| ami(a, &format!("status.amis[{i}]")))
        .collect::<Result<_, _>>()?;
    Ok(NodeClass {
        name: nc
            .metadata
            .name
            .clone()
            .ok_or_else(|| FieldError::new("metadata.name", "missing"))?,
        hash: crate::hash::nodeclass_hash(nc),
        hash_version: kerf_labels::aws::KERF_EC2NODECLASS_HASH_VERSION.to_string(),
        amis,
        subnets: status.subnets.iter().map(|s| s.id.clone()).collect(),
        security_groups: status
            .security_groups
            .iter()
            .map(|s| s.id.clone())
            .collect(),
        capacity_reservations: status
            .capacity_reservations
            .iter()
            .map(|r| r.id.clone())
            .collect(),
        placement_group: match nc.spec.placement_group_selector {
            None => ResolvedPlacementGroup::NoGroup,
            Some(_) => ResolvedPlacementGroup::Unknown,
        },
    })
}

fn ami(a: &karpenter::ec2nodeclass_status::Ami, f: &str) -> Result<Ami, FieldError> {
    let requirements = a
        .requirements
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let operator = Operator::parse(&r.operator).ok_or_else(|| {
                FieldError::new(
                    format!("{f}.requirements[{i}].operator"),
                    format!("unknown operator {:?}", r.operator),
                )
            })?;
            Ok(SelectorRequirement {
                key: r.key.clone(),
                operator,
                values: r.values.clone(),
                min_values: None,
            })
        })
        .collect::<Result<_, FieldError>>()?;
    Ok(Ami {
        id: a.id.clone(),
        requirements,
    })
}

#[cfg(test)]
mod tests {
    use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

    use super::*;

    fn budget(max: Option<IntOrString>, min: Option<IntOrString>) -> policy::PodDisruptionBudget {
        policy::PodDisruptionBudget {
            metadata: k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta {
                name: Some("b".into()),
                ..Default::default()
            },
            spec: Some(policy::PodDisruptionBudgetSpec {
                max_unavailable: max,
                min_available: min,
                ..Default::default()
            }),
            status: None,
        }
    }

    #[test]
    fn a_budget_blocks_all_only_at_zero_unavailable_or_all_available() {
        use IntOrString::{Int, String as Str};
        let cases = [
            (Some(Int(0)), None, true),
            (Some(Str("0%".into())), None, true),
            (None, Some(Str("100%".into())), true),
            (Some(Int(1)), None, false),
            (Some(Str("10%".into())), None, false),
            (None, Some(Int(3)), false),
            (None, Some(Str("99%".into())), false),
            (None, None, false),
        ];
        for (max, min, blocks) in cases {
            let b = budget(max.clone(), min.clone());
            assert_eq!(pdb(&b).unwrap().blocks_all, blocks, "{max:?} {min:?}");
        }
    }
}
