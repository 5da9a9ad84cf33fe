//! Deployments, ReplicaSets, StatefulSets and Jobs without pods of their own in the input are
//! expanded into pending pods named `<name>-<i>`, which is how what-if manifests are planned.

use k8s_openapi::api::core::v1 as core;
use kerf_engine::model::Pod;

use super::labels;
use super::pod::pod_spec;
use crate::FieldError;

/// A workload reduced to what expansion needs.
#[derive(Clone, Debug)]
pub struct Workload {
    pub kind: String,
    pub namespace: String,
    pub name: String,
    pub replicas: i32,
    pub template: core::PodTemplateSpec,
    /// The Deployment owning a ReplicaSet, if any.
    pub owner: Option<String>,
}

/// Expands a workload into `replicas` pending pods.
pub fn expand(w: &Workload) -> Result<Vec<Pod>, FieldError> {
    let tmeta = w.template.metadata.clone().unwrap_or_default();
    let lbls = labels(&tmeta);
    let spec = w
        .template
        .spec
        .as_ref()
        .ok_or_else(|| FieldError::new("spec.template.spec", "missing"))?;
    let engine_spec = pod_spec(spec, &lbls, "spec.template.spec")?;
    Ok((0..w.replicas.max(0))
        .map(|i| {
            let name = format!("{}-{i}", w.name);
            Pod {
                uid: format!("{}/{}", w.namespace, name),
                namespace: w.namespace.clone(),
                name,
                labels: lbls.clone(),
                node_name: None,
                created: 0,
                phase: "Pending".into(),
                terminating: false,
                daemonset: None,
                spec: engine_spec.clone(),
                ..Default::default()
            }
        })
        .collect())
}

/// True when some input pod (or, for a Deployment, one of its ReplicaSets' pods) belongs to it.
pub fn has_pods(w: &Workload, owners: &[(String, String, String)], workloads: &[Workload]) -> bool {
    let owns = |kind: &str, name: &str| {
        owners
            .iter()
            .any(|(ns, k, n)| ns == &w.namespace && k == kind && n == name)
    };
    if owns(&w.kind, &w.name) {
        return true;
    }
    w.kind == "Deployment"
        && (workloads.iter().any(|r| {
            r.kind == "ReplicaSet"
                && r.owner.as_deref() == Some(&w.name)
                && r.namespace == w.namespace
                && owns("ReplicaSet", &r.name)
        }) || owners.iter().any(|(ns, k, n)| {
            ns == &w.namespace
                && k == "ReplicaSet"
                && n.strip_prefix(&w.name).is_some_and(|r| r.starts_with('-'))
        }))
}
