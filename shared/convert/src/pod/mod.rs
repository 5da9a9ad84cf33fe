//! Pod specs to the engine's `PodSpec`: requests as kube-scheduler sums them, node selection,
//! tolerations, topology spread, pod (anti-)affinity and host ports.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1 as core;
use k8s_openapi::apimachinery::pkg::apis::meta::v1 as meta;
use kerf_engine::model::{Effect, HostPort, Pod, PodSpec, Taint, Toleration, WeightedTerm};
use kerf_engine::podreqs::{ContainerResources, effective_pod_requests};
use kerf_engine::requirements::{Operator, Requirement, SelectorRequirement};

use super::{labels, resources, timestamp};
use crate::FieldError;

mod affinity;

pub use affinity::selector;
use affinity::{pod_affinity, spread};

/// A pod object to the engine's pod.
pub fn pod(p: &core::Pod) -> Result<Pod, FieldError> {
    let m = &p.metadata;
    let spec = p
        .spec
        .as_ref()
        .ok_or_else(|| FieldError::new("spec", "missing"))?;
    let mut out = Pod {
        namespace: m.namespace.clone().unwrap_or_else(|| "default".into()),
        name: m
            .name
            .clone()
            .ok_or_else(|| FieldError::new("metadata.name", "missing"))?,
        uid: m.uid.clone().unwrap_or_default(),
        labels: labels(m),
        node_name: spec.node_name.clone().filter(|n| !n.is_empty()),
        created: m.creation_timestamp.as_ref().map(timestamp).unwrap_or(0),
        phase: p
            .status
            .as_ref()
            .and_then(|s| s.phase.clone())
            .unwrap_or_default(),
        terminating: m.deletion_timestamp.is_some(),
        daemonset: owner(m, "DaemonSet"),
        spec: pod_spec(spec, &labels(m), "spec")?,
        ..Default::default()
    };
    crate::disruption::pod_status(p, &mut out);
    Ok(out)
}

/// The name of the owner of `kind`, if any.
pub fn owner(m: &meta::ObjectMeta, kind: &str) -> Option<String> {
    m.owner_references
        .iter()
        .flatten()
        .find(|o| o.kind == kind)
        .map(|o| o.name.clone())
}

/// A pod spec (from a pod or a workload template) to the engine's spec.
pub fn pod_spec(
    s: &core::PodSpec,
    pod_labels: &BTreeMap<String, String>,
    f: &str,
) -> Result<PodSpec, FieldError> {
    let mut out = PodSpec {
        requests: requests(s, f)?,
        node_selector: s.node_selector.clone().unwrap_or_default(),
        tolerations: tolerations(
            s.tolerations.as_deref().unwrap_or_default(),
            &format!("{f}.tolerations"),
        )?,
        host_ports: host_ports(s),
        ..Default::default()
    };
    if let Some(aff) = &s.affinity {
        node_affinity(
            aff.node_affinity.as_ref(),
            &mut out,
            &format!("{f}.affinity.nodeAffinity"),
        )?;
        pod_affinity(aff, &mut out, &format!("{f}.affinity"))?;
    }
    for (i, c) in s.topology_spread_constraints.iter().flatten().enumerate() {
        out.spread.push(spread(
            c,
            pod_labels,
            &format!("{f}.topologySpreadConstraints[{i}]"),
        )?);
    }
    Ok(out)
}

fn requests(s: &core::PodSpec, f: &str) -> Result<kerf_catalog::Resources, FieldError> {
    let conv = |c: &core::Container,
                field: String,
                sidecar: bool|
     -> Result<ContainerResources, FieldError> {
        let r = c.resources.as_ref();
        Ok(ContainerResources {
            requests: resources(
                &format!("{field}.resources.requests"),
                r.and_then(|r| r.requests.as_ref()),
            )?,
            limits: resources(
                &format!("{field}.resources.limits"),
                r.and_then(|r| r.limits.as_ref()),
            )?,
            sidecar,
        })
    };
    let containers: Vec<ContainerResources> = s
        .containers
        .iter()
        .enumerate()
        .map(|(i, c)| conv(c, format!("{f}.containers[{i}]"), false))
        .collect::<Result<_, _>>()?;
    let inits: Vec<ContainerResources> = s
        .init_containers
        .iter()
        .flatten()
        .enumerate()
        .map(|(i, c)| {
            conv(
                c,
                format!("{f}.initContainers[{i}]"),
                c.restart_policy.as_deref() == Some("Always"),
            )
        })
        .collect::<Result<_, _>>()?;
    let pod_level = s
        .resources
        .as_ref()
        .map(|r| -> Result<ContainerResources, FieldError> {
            Ok(ContainerResources {
                requests: resources(&format!("{f}.resources.requests"), r.requests.as_ref())?,
                limits: resources(&format!("{f}.resources.limits"), r.limits.as_ref())?,
                sidecar: false,
            })
        })
        .transpose()?;
    let overhead = resources(&format!("{f}.overhead"), s.overhead.as_ref())?;
    Ok(effective_pod_requests(
        &containers,
        &inits,
        pod_level.as_ref(),
        &overhead,
    ))
}

fn host_ports(s: &core::PodSpec) -> Vec<HostPort> {
    s.containers
        .iter()
        .flat_map(|c| c.ports.iter().flatten())
        .filter_map(|p| {
            p.host_port.filter(|hp| *hp > 0).map(|hp| HostPort {
                ip: p.host_ip.clone().unwrap_or_default(),
                port: hp,
                protocol: p.protocol.clone().unwrap_or_else(|| "TCP".into()),
            })
        })
        .collect()
}

/// Tolerations, validating operator and effect.
pub fn tolerations(ts: &[core::Toleration], f: &str) -> Result<Vec<Toleration>, FieldError> {
    ts.iter()
        .enumerate()
        .map(|(i, t)| {
            let exists = match t.operator.as_deref() {
                None | Some("Equal") | Some("") => false,
                Some("Exists") => true,
                Some(o) => {
                    return Err(FieldError::new(
                        format!("{f}[{i}].operator"),
                        format!("unknown operator {o:?}"),
                    ));
                }
            };
            let effect = match t.effect.as_deref() {
                None | Some("") => None,
                Some(e) => Some(effect(e, &format!("{f}[{i}].effect"))?),
            };
            Ok(Toleration {
                key: t.key.clone().unwrap_or_default(),
                exists,
                value: t.value.clone().unwrap_or_default(),
                effect,
            })
        })
        .collect()
}

/// A taint effect, validated.
pub fn effect(e: &str, f: &str) -> Result<Effect, FieldError> {
    Effect::parse(e).ok_or_else(|| FieldError::new(f, format!("unknown taint effect {e:?}")))
}

/// Node taints to the engine's taints.
pub fn taints(ts: &[core::Taint], f: &str) -> Result<Vec<Taint>, FieldError> {
    ts.iter()
        .enumerate()
        .map(|(i, t)| {
            Ok(Taint {
                key: t.key.clone(),
                value: t.value.clone().unwrap_or_default(),
                effect: effect(&t.effect, &format!("{f}[{i}].effect"))?,
            })
        })
        .collect()
}

/// A node selector requirement, validating its operator and values.
pub fn requirement(
    r: &core::NodeSelectorRequirement,
    f: &str,
) -> Result<SelectorRequirement, FieldError> {
    let op = Operator::parse(&r.operator).ok_or_else(|| {
        FieldError::new(
            format!("{f}.operator"),
            format!("unknown operator {:?}", r.operator),
        )
    })?;
    let s = SelectorRequirement {
        key: r.key.clone(),
        operator: op,
        values: r.values.clone().unwrap_or_default(),
        min_values: None,
    };
    Requirement::from_selector(&s).map_err(|e| FieldError::new(f, e.to_string()))?;
    Ok(s)
}

fn term(t: &core::NodeSelectorTerm, f: &str) -> Result<Vec<SelectorRequirement>, FieldError> {
    let mut out: Vec<SelectorRequirement> = t
        .match_expressions
        .iter()
        .flatten()
        .enumerate()
        .map(|(i, r)| requirement(r, &format!("{f}.matchExpressions[{i}]")))
        .collect::<Result<_, _>>()?;
    for (i, r) in t.match_fields.iter().flatten().enumerate() {
        out.push(field(r, &format!("{f}.matchFields[{i}]"))?);
    }
    Ok(out)
}

/// A `matchFields` requirement: kube-scheduler supports `metadata.name` with `In` or `NotIn`,
/// which only an existing node can satisfy, so it becomes a key only existing nodes carry.
fn field(r: &core::NodeSelectorRequirement, f: &str) -> Result<SelectorRequirement, FieldError> {
    if r.key != "metadata.name" {
        return Err(FieldError::new(
            format!("{f}.key"),
            format!("unsupported field {:?} (only metadata.name)", r.key),
        ));
    }
    let operator = match r.operator.as_str() {
        "In" => Operator::In,
        "NotIn" => Operator::NotIn,
        o => {
            return Err(FieldError::new(
                format!("{f}.operator"),
                format!("unsupported operator {o:?} for metadata.name (In or NotIn)"),
            ));
        }
    };
    Ok(SelectorRequirement {
        key: kerf_engine::labels::NODE_NAME_FIELD.into(),
        operator,
        values: r.values.clone().unwrap_or_default(),
        min_values: None,
    })
}

fn node_affinity(
    na: Option<&core::NodeAffinity>,
    out: &mut PodSpec,
    f: &str,
) -> Result<(), FieldError> {
    let Some(na) = na else { return Ok(()) };
    if let Some(req) = &na.required_during_scheduling_ignored_during_execution {
        for (i, t) in req.node_selector_terms.iter().enumerate() {
            out.required_terms.push(term(
                t,
                &format!(
                    "{f}.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[{i}]"
                ),
            )?);
        }
    }
    for (i, p) in na
        .preferred_during_scheduling_ignored_during_execution
        .iter()
        .flatten()
        .enumerate()
    {
        let t = term(
            &p.preference,
            &format!("{f}.preferredDuringSchedulingIgnoredDuringExecution[{i}].preference"),
        )?;
        out.preferred_terms.push(WeightedTerm {
            weight: p.weight,
            term: t,
        });
    }
    Ok(())
}
