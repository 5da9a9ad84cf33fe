//! Nodes, NodeClaims, NodePools (with their EC2NodeClass-derived catalogs) and DaemonSets.

use std::collections::BTreeMap;
use std::sync::Arc;

use k8s_openapi::api::core::v1 as core;
use kerf_api::v1 as karpenter;
use kerf_catalog::network::{InterfaceType, NetworkInterface};
use kerf_catalog::settings::{
    AmiFamily, BlockDeviceMapping, InstanceStorePolicy, NodeClassSettings,
};
use kerf_catalog::{Catalog, Resources, quantity};
use kerf_engine::model::{DaemonSet, Node, NodeClaim, NodePool, Taint};
use kerf_engine::requirements::{Operator, Requirement, SelectorRequirement};

use super::labels;
use super::pod::{effect, pod_spec, taints};
use crate::FieldError;

pub fn node(n: &core::Node) -> Result<Node, FieldError> {
    let spec = n.spec.clone().unwrap_or_default();
    let status = n.status.clone().unwrap_or_default();
    Ok(Node {
        name: n
            .metadata
            .name
            .clone()
            .ok_or_else(|| FieldError::new("metadata.name", "missing"))?,
        labels: labels(&n.metadata),
        taints: taints(spec.taints.as_deref().unwrap_or_default(), "spec.taints")?,
        allocatable: super::resources("status.allocatable", status.allocatable.as_ref())?,
        capacity: super::resources("status.capacity", status.capacity.as_ref())?,
        unschedulable: spec.unschedulable.unwrap_or(false),
        deleting: n.metadata.deletion_timestamp.is_some(),
        provider_id: spec.provider_id.unwrap_or_default(),
        annotations: n.metadata.annotations.clone().unwrap_or_default(),
        ready: crate::disruption::node_ready(n),
        volume_limits: BTreeMap::new(),
    })
}

fn karpenter_taints(ts: &[karpenter::common::Taint], f: &str) -> Result<Vec<Taint>, FieldError> {
    ts.iter()
        .enumerate()
        .map(|(i, t)| {
            let e = serde_json::to_value(t.effect)
                .ok()
                .and_then(|v| v.as_str().map(str::to_string))
                .unwrap_or_default();
            Ok(Taint {
                key: t.key.clone(),
                value: t.value.clone().unwrap_or_default(),
                effect: effect(&e, &format!("{f}[{i}].effect"))?,
            })
        })
        .collect()
}

pub(crate) fn karpenter_requirements(
    rs: &[karpenter::common::NodeSelectorRequirementWithMinValues],
    f: &str,
) -> Result<Vec<SelectorRequirement>, FieldError> {
    rs.iter()
        .enumerate()
        .map(|(i, r)| {
            let op_s = serde_json::to_value(r.operator)
                .ok()
                .and_then(|v| v.as_str().map(str::to_string))
                .unwrap_or_default();
            let operator = Operator::parse(&op_s).ok_or_else(|| {
                FieldError::new(
                    format!("{f}[{i}].operator"),
                    format!("unknown operator {op_s:?}"),
                )
            })?;
            let min_values = match r.min_values {
                Some(m) if !(1..=50).contains(&m) => {
                    return Err(FieldError::new(
                        format!("{f}[{i}].minValues"),
                        "must be between 1 and 50",
                    ));
                }
                m => m.map(|m| m as u32),
            };
            let s = SelectorRequirement {
                key: r.key.clone(),
                operator,
                values: r.values.clone(),
                min_values,
            };
            Requirement::from_selector(&s)
                .map_err(|e| FieldError::new(format!("{f}[{i}]"), e.to_string()))?;
            Ok(s)
        })
        .collect()
}

fn quantities(
    m: &BTreeMap<String, k8s_openapi::apimachinery::pkg::api::resource::Quantity>,
    f: &str,
) -> Result<Resources, FieldError> {
    super::resources(f, Some(m))
}

pub fn node_claim(c: &karpenter::NodeClaim) -> Result<NodeClaim, FieldError> {
    let lbls = labels(&c.metadata);
    let status = c.status.clone().unwrap_or_default();
    let mut out = NodeClaim {
        name: c
            .metadata
            .name
            .clone()
            .ok_or_else(|| FieldError::new("metadata.name", "missing"))?,
        node_pool: lbls.get(kerf_labels::NODEPOOL).cloned().unwrap_or_default(),
        labels: lbls,
        requirements: karpenter_requirements(&c.spec.requirements, "spec.requirements")?,
        taints: karpenter_taints(&c.spec.taints, "spec.taints")?,
        startup_taints: karpenter_taints(&c.spec.startup_taints, "spec.startupTaints")?,
        allocatable: quantities(&status.allocatable, "status.allocatable")?,
        capacity: quantities(&status.capacity, "status.capacity")?,
        node_name: status.node_name.clone().filter(|n| !n.is_empty()),
        provider_id: status.provider_id.clone().unwrap_or_default(),
        deleting: c.metadata.deletion_timestamp.is_some(),
        ..Default::default()
    };
    crate::disruption::claim_status(c, &mut out)?;
    Ok(out)
}

/// Catalog inputs an EC2NodeClass sets.
pub fn settings(nc: &karpenter::EC2NodeClass) -> Result<NodeClassSettings, FieldError> {
    let s = &nc.spec;
    let family = family(nc)?;
    let mut out = NodeClassSettings::for_family(family);
    if let Some(k) = &s.kubelet {
        out.max_pods = k.max_pods.map(|v| v.max(0) as u32);
        out.pods_per_core = k.pods_per_core.map(|v| v.max(0) as u32);
        out.kube_reserved = k.kube_reserved.clone();
        out.system_reserved = k.system_reserved.clone();
        out.eviction_hard = k.eviction_hard.clone();
        for (name, m) in [
            ("kubeReserved", &k.kube_reserved),
            ("systemReserved", &k.system_reserved),
        ] {
            for (key, v) in m {
                quantity::parse(v).map_err(|_| {
                    FieldError::new(
                        format!("spec.kubelet.{name}.{key}"),
                        format!("invalid quantity {v:?}"),
                    )
                })?;
            }
        }
    }
    out.block_device_mappings = s
        .block_device_mappings
        .iter()
        .map(|b| BlockDeviceMapping {
            device_name: b.device_name.clone(),
            root_volume: b.root_volume,
            volume_size: b.ebs.as_ref().and_then(|e| e.volume_size.clone()),
        })
        .collect();
    if s.instance_store_policy.is_some() {
        out.instance_store_policy = Some(InstanceStorePolicy::RAID0);
    }
    out.network_interfaces = s
        .network_interfaces
        .iter()
        .enumerate()
        .map(network_interface)
        .collect::<Result<_, _>>()?;
    out.connection_tracking = s.connection_tracking.is_some();
    Ok(out)
}

/// One `spec.networkInterfaces[]` entry as the catalog reads it.
fn network_interface(
    (i, n): (usize, &karpenter::NetworkInterface),
) -> Result<NetworkInterface, FieldError> {
    let index = |field: &str, v: i32| {
        u32::try_from(v).map_err(|_| {
            FieldError::new(
                format!("spec.networkInterfaces[{i}].{field}"),
                format!("must be at least 0, not {v}"),
            )
        })
    };
    Ok(NetworkInterface {
        network_card_index: index("networkCardIndex", n.network_card_index)?,
        device_index: index("deviceIndex", n.device_index)?,
        interface_type: match n.interface_type {
            karpenter::InterfaceType::Interface => InterfaceType::Interface,
            karpenter::InterfaceType::EfaOnly => InterfaceType::EfaOnly,
        },
    })
}

fn family(nc: &karpenter::EC2NodeClass) -> Result<AmiFamily, FieldError> {
    if let Some(alias) = nc
        .spec
        .ami_selector_terms
        .iter()
        .find_map(|t| t.alias.clone())
    {
        let name = alias.split('@').next().unwrap_or_default();
        return AmiFamily::parse(name).ok_or_else(|| {
            FieldError::new(
                "spec.amiSelectorTerms[].alias",
                format!("unknown AMI family in alias {alias:?}"),
            )
        });
    }
    match &nc.spec.ami_family {
        Some(f) => {
            let s = serde_json::to_value(f)
                .ok()
                .and_then(|v| v.as_str().map(str::to_string))
                .unwrap_or_default();
            AmiFamily::parse(&s).ok_or_else(|| {
                FieldError::new("spec.amiFamily", format!("unknown AMI family {s:?}"))
            })
        }
        None => Ok(AmiFamily::default()),
    }
}

/// A NodePool with the catalog its node class yields.
pub fn node_pool(np: &karpenter::NodePool, catalog: Arc<Catalog>) -> Result<NodePool, FieldError> {
    let t = &np.spec.template;
    let limits = if np.spec.limits.is_empty() {
        None
    } else {
        Some(quantities(&np.spec.limits, "spec.limits")?)
    };
    Ok(NodePool {
        name: np
            .metadata
            .name
            .clone()
            .ok_or_else(|| FieldError::new("metadata.name", "missing"))?,
        weight: np.spec.weight.unwrap_or(0),
        labels: t.metadata.labels.clone(),
        requirements: karpenter_requirements(
            &t.spec.requirements,
            "spec.template.spec.requirements",
        )?,
        taints: karpenter_taints(&t.spec.taints, "spec.template.spec.taints")?,
        startup_taints: karpenter_taints(
            &t.spec.startup_taints,
            "spec.template.spec.startupTaints",
        )?,
        limits,
        node_class: t.spec.node_class_ref.name.clone(),
        catalog,
        deleting: np.metadata.deletion_timestamp.is_some(),
        disruption: crate::disruption::pool_disruption(&np.spec.disruption)?,
        expire_after: crate::disruption::nillable(
            "spec.template.spec.expireAfter",
            &t.spec.expire_after,
        )?,
        termination_grace_period: t
            .spec
            .termination_grace_period
            .as_deref()
            .map(|s| crate::disruption::duration("spec.template.spec.terminationGracePeriod", s))
            .transpose()?,
        hash: crate::hash::nodepool_hash(np),
        hash_version: kerf_labels::KERF_NODEPOOL_HASH_VERSION.to_string(),
        replicas: np.spec.replicas,
        unready: None,
        max_cost_per_hour: crate::budget::max_cost_per_hour(np)?,
    })
}

pub fn daemon_set(ds: &k8s_openapi::api::apps::v1::DaemonSet) -> Result<DaemonSet, FieldError> {
    let spec = &ds.spec;
    let tmeta = spec.template.metadata.clone().unwrap_or_default();
    let pod = spec
        .template
        .spec
        .as_ref()
        .ok_or_else(|| FieldError::new("spec.template.spec", "missing"))?;
    Ok(DaemonSet {
        namespace: ds
            .metadata
            .namespace
            .clone()
            .unwrap_or_else(|| "default".into()),
        name: ds.metadata.name.clone().unwrap_or_default(),
        pod: pod_spec(pod, &labels(&tmeta), "spec.template.spec")?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn network_interfaces_and_connection_tracking_reach_the_settings() {
        let nc: karpenter::EC2NodeClass = serde_json::from_value(serde_json::json!({
            "apiVersion": "karpenter.k8s.aws/v1", "kind": "EC2NodeClass",
            "metadata": {"name": "efa"},
            "spec": {
                "role": "R", "amiSelectorTerms": [{"alias": "al2023@latest"}],
                "subnetSelectorTerms": [{"id": "subnet-1"}],
                "securityGroupSelectorTerms": [{"id": "sg-1"}],
                "networkInterfaces": [
                    {"networkCardIndex": 0, "deviceIndex": 0, "interfaceType": "interface"},
                    {"networkCardIndex": 1, "deviceIndex": 0, "interfaceType": "efa-only"}
                ],
                "connectionTracking": {"udpTimeout": 30}
            }
        }))
        .unwrap();
        let s = settings(&nc).unwrap();
        assert_eq!(
            s.network_interfaces,
            [
                NetworkInterface {
                    network_card_index: 0,
                    device_index: 0,
                    interface_type: InterfaceType::Interface
                },
                NetworkInterface {
                    network_card_index: 1,
                    device_index: 0,
                    interface_type: InterfaceType::EfaOnly
                }
            ]
        );
        assert!(s.connection_tracking);
        let mut bad = nc;
        bad.spec.network_interfaces[1].device_index = -1;
        let e = settings(&bad).unwrap_err();
        assert_eq!(e.field, "spec.networkInterfaces[1].deviceIndex");
    }
}
