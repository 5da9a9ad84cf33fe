//! Pod placement relative to other pods: label selectors, topology spread and pod
//! (anti-)affinity, required and preferred, as kube-scheduler reads them.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1 as core;
use k8s_openapi::apimachinery::pkg::apis::meta::v1 as meta;
use kerf_engine::model::{
    AffinityTerm, LabelSelector, PodSpec, TopologySpread, WeightedTerm, WhenUnsatisfiable,
};
use kerf_engine::requirements::{Operator, SelectorRequirement};

use crate::FieldError;

/// A label selector, validating expression operators.
pub fn selector(s: Option<&meta::LabelSelector>, f: &str) -> Result<LabelSelector, FieldError> {
    let Some(s) = s else {
        // A nil selector selects nothing.
        return Ok(LabelSelector {
            match_expressions: vec![SelectorRequirement {
                key: "kerf.dev/none".into(),
                operator: Operator::Exists,
                values: vec![],
                min_values: None,
            }],
            ..Default::default()
        });
    };
    let mut out = LabelSelector {
        match_labels: s.match_labels.clone().unwrap_or_default(),
        ..Default::default()
    };
    for (i, e) in s.match_expressions.iter().flatten().enumerate() {
        let op = match e.operator.as_str() {
            "In" => Operator::In,
            "NotIn" => Operator::NotIn,
            "Exists" => Operator::Exists,
            "DoesNotExist" => Operator::DoesNotExist,
            o => {
                return Err(FieldError::new(
                    format!("{f}.matchExpressions[{i}].operator"),
                    format!("unknown operator {o:?}"),
                ));
            }
        };
        out.match_expressions.push(SelectorRequirement {
            key: e.key.clone(),
            operator: op,
            values: e.values.clone().unwrap_or_default(),
            min_values: None,
        });
    }
    Ok(out)
}

pub(super) fn spread(
    c: &core::TopologySpreadConstraint,
    pod_labels: &BTreeMap<String, String>,
    f: &str,
) -> Result<TopologySpread, FieldError> {
    let when = match c.when_unsatisfiable.as_str() {
        "DoNotSchedule" => WhenUnsatisfiable::DoNotSchedule,
        "ScheduleAnyway" => WhenUnsatisfiable::ScheduleAnyway,
        o => {
            return Err(FieldError::new(
                format!("{f}.whenUnsatisfiable"),
                format!("unknown value {o:?}"),
            ));
        }
    };
    if c.max_skew < 1 {
        return Err(FieldError::new(
            format!("{f}.maxSkew"),
            "must be at least 1",
        ));
    }
    let mut sel = selector(c.label_selector.as_ref(), &format!("{f}.labelSelector"))?;
    for k in c.match_label_keys.iter().flatten() {
        if let Some(v) = pod_labels.get(k) {
            sel.match_expressions.push(SelectorRequirement {
                key: k.clone(),
                operator: Operator::In,
                values: vec![v.clone()],
                min_values: None,
            });
        }
    }
    Ok(TopologySpread {
        max_skew: c.max_skew,
        topology_key: c.topology_key.clone(),
        when_unsatisfiable: when,
        selector: sel,
        min_domains: c.min_domains,
        honor_node_affinity: c.node_affinity_policy.as_deref() != Some("Ignore"),
        honor_node_taints: c.node_taints_policy.as_deref() == Some("Honor"),
    })
}

fn affinity_term(t: &core::PodAffinityTerm, f: &str) -> Result<AffinityTerm, FieldError> {
    Ok(AffinityTerm {
        topology_key: t.topology_key.clone(),
        selector: selector(t.label_selector.as_ref(), &format!("{f}.labelSelector"))?,
        namespaces: t.namespaces.clone().unwrap_or_default(),
        all_namespaces: t.namespace_selector.as_ref().is_some_and(empty_selector),
        namespace_selector: match &t.namespace_selector {
            Some(s) if !empty_selector(s) => {
                Some(selector(Some(s), &format!("{f}.namespaceSelector"))?)
            }
            _ => None,
        },
    })
}

fn empty_selector(s: &meta::LabelSelector) -> bool {
    s.match_labels.as_ref().is_none_or(BTreeMap::is_empty)
        && s.match_expressions.as_ref().is_none_or(Vec::is_empty)
}

type Terms<'a> = (
    Option<&'a Vec<core::PodAffinityTerm>>,
    Option<&'a Vec<core::WeightedPodAffinityTerm>>,
);

fn terms(
    required: &mut Vec<AffinityTerm>,
    preferred: &mut Vec<WeightedTerm<AffinityTerm>>,
    t: Terms<'_>,
    f: &str,
) -> Result<(), FieldError> {
    for (i, r) in t.0.into_iter().flatten().enumerate() {
        required.push(affinity_term(
            r,
            &format!("{f}.requiredDuringSchedulingIgnoredDuringExecution[{i}]"),
        )?);
    }
    for (i, w) in t.1.into_iter().flatten().enumerate() {
        let term = affinity_term(
            &w.pod_affinity_term,
            &format!("{f}.preferredDuringSchedulingIgnoredDuringExecution[{i}].podAffinityTerm"),
        )?;
        preferred.push(WeightedTerm {
            weight: w.weight,
            term,
        });
    }
    Ok(())
}

pub(super) fn pod_affinity(
    aff: &core::Affinity,
    out: &mut PodSpec,
    f: &str,
) -> Result<(), FieldError> {
    if let Some(pa) = &aff.pod_affinity {
        let t = (
            pa.required_during_scheduling_ignored_during_execution
                .as_ref(),
            pa.preferred_during_scheduling_ignored_during_execution
                .as_ref(),
        );
        terms(
            &mut out.affinity,
            &mut out.preferred_affinity,
            t,
            &format!("{f}.podAffinity"),
        )?;
    }
    if let Some(pa) = &aff.pod_anti_affinity {
        let t = (
            pa.required_during_scheduling_ignored_during_execution
                .as_ref(),
            pa.preferred_during_scheduling_ignored_during_execution
                .as_ref(),
        );
        terms(
            &mut out.anti_affinity,
            &mut out.preferred_anti_affinity,
            t,
            &format!("{f}.podAntiAffinity"),
        )?;
    }
    Ok(())
}
