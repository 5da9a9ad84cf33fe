//! The StatefulSet controller: pods `<set>-0` .. `<set>-<replicas-1>`, owned by the set,
//! each with its claims `<template>-<set>-<ordinal>` from `volumeClaimTemplates` (created
//! when missing and kept when the pod goes, so a recreated pod finds its volume again).
//! With `podManagementPolicy: OrderedReady` (the default) a pod is created only once every
//! lower ordinal is Running, and one pod is removed at a time, highest ordinal first;
//! `Parallel` creates and removes them all at once. A pod that is gone is recreated under
//! the same name; one still terminating is waited for.

use std::collections::BTreeMap;

use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::core::v1::{PersistentVolumeClaim, Pod};
use kube::Client;
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use serde_json::{Value, json};

use super::WorkloadReport;

/// The label naming a StatefulSet pod.
pub const POD_NAME_LABEL: &str = "statefulset.kubernetes.io/pod-name";
/// The label carrying a StatefulSet pod's ordinal.
pub const POD_INDEX_LABEL: &str = "apps.kubernetes.io/pod-index";

/// `spec.podManagementPolicy`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PodManagement {
    OrderedReady,
    Parallel,
}

impl PodManagement {
    /// The set's policy (Kubernetes' default is `OrderedReady`).
    pub fn of(s: &StatefulSet) -> Self {
        let policy = s.spec.pod_management_policy.as_deref();
        match policy {
            Some("Parallel") => PodManagement::Parallel,
            _ => PodManagement::OrderedReady,
        }
    }
}

/// The name of ordinal `i`'s claim from template `template` of set `set`.
pub fn claim_name(template: &str, set: &str, i: usize) -> String {
    format!("{template}-{set}-{i}")
}

/// The pods of `set` in `ns` by ordinal (terminating ones included).
fn owned<'a>(pods: &'a [Pod], ns: &str, set: &str) -> BTreeMap<usize, &'a Pod> {
    pods.iter()
        .filter(|p| p.metadata.namespace.as_deref() == Some(ns))
        .filter(|p| {
            let mut refs = p.metadata.owner_references.iter().flatten();
            refs.any(|o| o.kind == "StatefulSet" && o.name == set)
        })
        .filter_map(|p| {
            let name = p.metadata.name.as_deref()?;
            let i = name.strip_prefix(set)?.strip_prefix('-')?.parse().ok()?;
            Some((i, p))
        })
        .collect()
}

fn running(p: &Pod) -> bool {
    p.metadata.deletion_timestamp.is_none()
        && p.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Running")
}

/// Ordinal `i`'s pod, from the set's template.
pub fn pod_for(s: &StatefulSet, i: usize) -> Option<Pod> {
    let spec = &s.spec;
    let set = s.metadata.name.as_deref()?;
    let name = format!("{set}-{i}");
    let mut p = serde_json::to_value(&spec.template).ok()?;
    p["apiVersion"] = json!("v1");
    p["kind"] = json!("Pod");
    p["metadata"]["name"] = json!(name);
    p["metadata"]["namespace"] = json!(s.metadata.namespace);
    p["metadata"]["labels"][POD_NAME_LABEL] = json!(name);
    p["metadata"]["labels"][POD_INDEX_LABEL] = json!(i.to_string());
    p["metadata"]["ownerReferences"] = json!([{"apiVersion": "apps/v1", "kind": "StatefulSet",
        "name": set, "uid": s.metadata.uid, "controller": true, "blockOwnerDeletion": true}]);
    p["spec"]["hostname"] = json!(name);
    if !spec.service_name.as_deref().unwrap_or_default().is_empty() {
        p["spec"]["subdomain"] = json!(spec.service_name);
    }
    let mut volumes: Vec<Value> = p["spec"]["volumes"].as_array().cloned().unwrap_or_default();
    for t in spec.volume_claim_templates.iter().flatten() {
        let tname = t.metadata.name.clone().unwrap_or_default();
        volumes.retain(|v| v["name"] != json!(tname));
        volumes.push(json!({"name": tname,
            "persistentVolumeClaim": {"claimName": claim_name(&tname, set, i)}}));
    }
    if !volumes.is_empty() {
        p["spec"]["volumes"] = json!(volumes);
    }
    serde_json::from_value(p).ok()
}

/// Ordinal `i`'s claims, from the set's `volumeClaimTemplates`.
pub fn claims_for(s: &StatefulSet, i: usize) -> Vec<PersistentVolumeClaim> {
    let set = s.metadata.name.clone().unwrap_or_default();
    let labels = s.spec.selector.match_labels.clone().unwrap_or_default();
    let templates = s.spec.volume_claim_templates.iter().flatten();
    templates
        .map(|t| {
            let mut c = t.clone();
            let tname = t.metadata.name.clone().unwrap_or_default();
            c.metadata.name = Some(claim_name(&tname, &set, i));
            c.metadata.namespace = s.metadata.namespace.clone();
            let l = c.metadata.labels.get_or_insert_with(BTreeMap::new);
            l.extend(labels.clone());
            c.status = None;
            c
        })
        .collect()
}

/// Creates ordinal `i`'s missing claims, then its pod.
async fn create(client: &Client, s: &StatefulSet, i: usize) -> Result<bool, kube::Error> {
    let ns = s
        .metadata
        .namespace
        .clone()
        .unwrap_or_else(|| "default".into());
    let claims: Api<PersistentVolumeClaim> = Api::namespaced(client.clone(), &ns);
    for c in claims_for(s, i) {
        match claims.create(&PostParams::default(), &c).await {
            Ok(_) => {}
            Err(kube::Error::Api(e)) if e.code == 409 => {}
            Err(e) => return Err(e),
        }
    }
    let Some(pod) = pod_for(s, i) else {
        return Ok(false);
    };
    let pods: Api<Pod> = Api::namespaced(client.clone(), &ns);
    match pods.create(&PostParams::default(), &pod).await {
        Ok(_) => Ok(true),
        Err(kube::Error::Api(e)) if e.code == 409 => Ok(false),
        Err(e) => Err(e),
    }
}

/// One round over one StatefulSet.
async fn reconcile(
    client: &Client,
    s: &StatefulSet,
    pods: &[Pod],
    out: &mut WorkloadReport,
) -> Result<(), kube::Error> {
    let ns = s
        .metadata
        .namespace
        .clone()
        .unwrap_or_else(|| "default".into());
    let name = s.metadata.name.clone().unwrap_or_default();
    let want = s.spec.replicas.unwrap_or(1).max(0) as usize;
    let policy = PodManagement::of(s);
    let mine = owned(pods, &ns, &name);
    for i in 0..want {
        if mine.contains_key(&i) {
            continue;
        }
        let lower_ready = (0..i).all(|j| mine.get(&j).is_some_and(|p| running(p)));
        if policy == PodManagement::OrderedReady && !lower_ready {
            break;
        }
        if create(client, s, i).await? {
            out.created += 1;
        }
        if policy == PodManagement::OrderedReady {
            break;
        }
    }
    let api: Api<Pod> = Api::namespaced(client.clone(), &ns);
    let extra = mine.range(want..).rev();
    let terminating = mine
        .values()
        .any(|p| p.metadata.deletion_timestamp.is_some());
    for (_, p) in extra.filter(|(_, p)| p.metadata.deletion_timestamp.is_none()) {
        if policy == PodManagement::OrderedReady && terminating {
            break;
        }
        let pname = p.metadata.name.as_deref().unwrap_or_default();
        match api.delete(pname, &DeleteParams::default()).await {
            Ok(_) => out.deleted += 1,
            Err(kube::Error::Api(e)) if e.code == 404 => {}
            Err(e) => return Err(e),
        }
        if policy == PodManagement::OrderedReady {
            break;
        }
    }
    report_status(client, s, &mine).await
}

/// `status.replicas` and `readyReplicas`, written when they change.
async fn report_status(
    client: &Client,
    s: &StatefulSet,
    mine: &BTreeMap<usize, &Pod>,
) -> Result<(), kube::Error> {
    let replicas = mine
        .values()
        .filter(|p| p.metadata.deletion_timestamp.is_none())
        .count() as i32;
    let ready = mine.values().filter(|p| running(p)).count() as i32;
    let st = s.status.clone().unwrap_or_default();
    let have = (
        st.replicas,
        st.ready_replicas.unwrap_or(0),
        st.observed_generation,
    );
    if have == (replicas, ready, s.metadata.generation) {
        return Ok(());
    }
    let ns = s.metadata.namespace.as_deref().unwrap_or("default");
    let api: Api<StatefulSet> = Api::namespaced(client.clone(), ns);
    let patch = json!({"status": {"replicas": replicas, "readyReplicas": ready,
        "availableReplicas": ready, "currentReplicas": replicas, "updatedReplicas": replicas,
        "observedGeneration": s.metadata.generation}});
    let name = s.metadata.name.as_deref().unwrap_or_default();
    api.patch_status(name, &PatchParams::default(), &Patch::Merge(&patch))
        .await?;
    Ok(())
}

/// One round of the controller over every StatefulSet.
pub async fn step(
    client: &Client,
    sets: &[StatefulSet],
    pods: &[Pod],
) -> Result<WorkloadReport, kube::Error> {
    let mut out = WorkloadReport::default();
    for s in sets {
        reconcile(client, s, pods, &mut out).await?;
    }
    Ok(out)
}

#[cfg(test)]
#[path = "statefulsets_tests.rs"]
mod tests;
