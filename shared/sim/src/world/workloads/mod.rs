//! The workload controllers a simulated cluster needs: a Deployment keeps `replicas` pods
//! from its template through its ReplicaSet (`replicasets`; pods named
//! `<deployment>-<hash>-<suffix>`, owned by the ReplicaSet as in a real cluster); scaling down removes unbound pods first, then pods
//! on the nodes crowded with the most replicas, newest first (kube-controller-manager's
//! ranking). Pods of a ReplicaSet no Deployment wants any more are deleted, as the garbage
//! collector does after `kubectl delete deployment`. StatefulSets have their own controller
//! ([`statefulsets`]).

mod replicasets;
pub mod statefulsets;

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::api::apps::v1::{Deployment, ReplicaSet, StatefulSet};
use k8s_openapi::api::core::v1::Pod;
use kube::Client;
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};

use serde_json::json;

use crate::cached::Cached;

/// The label a ReplicaSet puts on its pods.
const TEMPLATE_HASH: &str = "pod-template-hash";

/// What a round did.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct WorkloadReport {
    pub created: usize,
    pub deleted: usize,
}

fn hash(s: &str) -> String {
    let h = s.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    });
    const ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
    (0..10)
        .map(|i| ALPHABET[((h >> (i * 6)) % 27) as usize] as char)
        .collect()
}

fn owned_by<'a>(pods: &'a [Pod], ns: &str, rs: &str) -> Vec<&'a Pod> {
    pods.iter()
        .filter(|p| {
            p.metadata.namespace.as_deref() == Some(ns) && p.metadata.deletion_timestamp.is_none()
        })
        .filter(|p| {
            p.metadata
                .owner_references
                .iter()
                .flatten()
                .any(|o| o.kind == "ReplicaSet" && o.name == rs)
        })
        .collect()
}

/// One round of the Deployment controller over every Deployment: reads through `reads`,
/// writes through `client`.
pub async fn step(client: &Client, reads: &Cached) -> Result<WorkloadReport, kube::Error> {
    let deps = reads.list::<Deployment>("apps/deployments")?;
    let sets = reads.list::<ReplicaSet>("apps/replicasets")?;
    let pods = reads.list::<Pod>("/pods")?;
    let mut out = WorkloadReport::default();
    let mut current = BTreeSet::new();
    for d in deps.iter() {
        let ns = d
            .metadata
            .namespace
            .clone()
            .unwrap_or_else(|| "default".into());
        let spec = d.spec.clone();
        let want = spec.replicas.unwrap_or(1).max(0);
        let mut template = serde_json::to_value(&spec.template).unwrap_or_default();
        let h = hash(&template.to_string());
        template["metadata"]["labels"][TEMPLATE_HASH] = json!(h);
        let rs = replicasets::ensure(client, &sets, d, &h, &template, want).await?;
        current.insert((ns.clone(), rs.name.clone()));
        let mine = owned_by(&pods, &ns, &rs.name);
        report_status(client, d, &mine).await?;
        let want = want as usize;
        let api: Api<Pod> = Api::namespaced(client.clone(), &ns);
        if mine.len() < want {
            for _ in mine.len()..want {
                let mut p = template.clone();
                p["apiVersion"] = json!("v1");
                p["kind"] = json!("Pod");
                p["metadata"]["generateName"] = json!(format!("{}-", rs.name));
                p["metadata"]["namespace"] = json!(ns);
                p["metadata"]["ownerReferences"] = json!([{"apiVersion": "apps/v1", "kind": "ReplicaSet",
                    "name": rs.name, "uid": rs.uid, "controller": true, "blockOwnerDeletion": true}]);
                if let Ok(pod) = serde_json::from_value::<Pod>(p) {
                    api.create(&PostParams::default(), &pod).await?;
                    out.created += 1;
                }
            }
        } else if mine.len() > want {
            for p in victims(&mine, mine.len() - want) {
                api.delete(
                    p.metadata.name.as_deref().unwrap_or_default(),
                    &DeleteParams::default(),
                )
                .await?;
                out.deleted += 1;
            }
        }
    }
    for rs in sets.iter() {
        let ns = rs.metadata.namespace.as_deref().unwrap_or("default");
        let name = rs.metadata.name.as_deref().unwrap_or_default();
        replicasets::report_status(client, rs, &owned_by(&pods, ns, name)).await?;
    }
    let owners: BTreeSet<String> = deps.iter().filter_map(|d| d.metadata.uid.clone()).collect();
    replicasets::collect(client, &sets, &owners).await?;
    out.deleted += collect(client, &pods, &current).await?;
    let stateful = reads.list::<StatefulSet>("apps/statefulsets")?;
    let s = statefulsets::step(client, &stateful, &pods).await?;
    out.created += s.created;
    out.deleted += s.deleted;
    Ok(out)
}

/// The Deployment's replica counts (`kubectl get deployments`: READY, UP-TO-DATE,
/// AVAILABLE), written when they change.
async fn report_status(client: &Client, d: &Deployment, mine: &[&Pod]) -> Result<(), kube::Error> {
    let live: Vec<&&Pod> = mine
        .iter()
        .filter(|p| p.metadata.deletion_timestamp.is_none())
        .collect();
    let ready = live
        .iter()
        .filter(|p| p.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Running"))
        .count() as i32;
    let replicas = live.len() as i32;
    let st = d.status.clone().unwrap_or_default();
    let have = (
        st.replicas.unwrap_or(0),
        st.ready_replicas.unwrap_or(0),
        st.observed_generation,
    );
    if have == (replicas, ready, d.metadata.generation) {
        return Ok(());
    }
    let ns = d.metadata.namespace.as_deref().unwrap_or("default");
    let api: Api<Deployment> = Api::namespaced(client.clone(), ns);
    let patch = json!({"status": {"replicas": replicas, "readyReplicas": ready,
        "availableReplicas": ready, "updatedReplicas": replicas,
        "observedGeneration": d.metadata.generation}});
    let name = d.metadata.name.as_deref().unwrap_or_default();
    api.patch_status(name, &PatchParams::default(), &Patch::Merge(&patch))
        .await?;
    Ok(())
}

/// Pods of a ReplicaSet no Deployment wants any more (the Deployment was deleted, or its
/// template changed): deleted, as the garbage collector and a rollout would.
async fn collect(
    client: &Client,
    pods: &[Pod],
    current: &BTreeSet<(String, String)>,
) -> Result<usize, kube::Error> {
    let mut deleted = 0;
    for p in pods
        .iter()
        .filter(|p| p.metadata.deletion_timestamp.is_none())
    {
        let ours = p
            .metadata
            .labels
            .as_ref()
            .is_some_and(|l| l.contains_key(TEMPLATE_HASH));
        let ns = p.metadata.namespace.clone().unwrap_or_default();
        let rs = p
            .metadata
            .owner_references
            .iter()
            .flatten()
            .find(|o| o.kind == "ReplicaSet")
            .map(|o| o.name.clone());
        let Some(rs) = rs.filter(|_| ours) else {
            continue;
        };
        if !current.contains(&(ns.clone(), rs)) {
            let api: Api<Pod> = Api::namespaced(client.clone(), &ns);
            let name = p.metadata.name.as_deref().unwrap_or_default();
            match api.delete(name, &DeleteParams::default()).await {
                Ok(_) => deleted += 1,
                Err(kube::Error::Api(e)) if e.code == 404 => {}
                Err(e) => return Err(e),
            }
        }
    }
    Ok(deleted)
}

/// The pods to remove when scaling down by `n`.
fn victims<'a>(pods: &[&'a Pod], n: usize) -> Vec<&'a Pod> {
    let node = |p: &Pod| p.spec.as_ref().and_then(|s| s.node_name.clone());
    let mut per_node: BTreeMap<String, usize> = BTreeMap::new();
    for p in pods {
        if let Some(nn) = node(p) {
            *per_node.entry(nn).or_default() += 1;
        }
    }
    let mut ranked: Vec<&'a Pod> = pods.to_vec();
    ranked.sort_by_key(|p| {
        let crowd = node(p).map(|nn| per_node[&nn]).unwrap_or(usize::MAX);
        let created = p
            .metadata
            .creation_timestamp
            .as_ref()
            .map(|t| t.0.as_second())
            .unwrap_or(0);
        (
            node(p).is_some(),
            std::cmp::Reverse(crowd),
            std::cmp::Reverse(created),
            p.metadata.name.clone(),
        )
    });
    ranked.truncate(n);
    ranked
}

#[cfg(test)]
mod tests;
