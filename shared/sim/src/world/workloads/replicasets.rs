//! The ReplicaSets behind Deployments, as kube-controller-manager keeps them: one per
//! template (`<deployment>-<pod-template-hash>`), owned by its Deployment, scaled to the
//! Deployment's replicas while current and to 0 once the template changed (kept, as a
//! Deployment's revision history is), its status counting its pods; a ReplicaSet whose
//! Deployment is gone is deleted, as the garbage collector does.

use std::collections::BTreeSet;

use k8s_openapi::api::apps::v1::{Deployment, ReplicaSet};
use k8s_openapi::api::core::v1::Pod;
use kube::Client;
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use serde_json::{Value, json};

use super::TEMPLATE_HASH;

/// A Deployment's current ReplicaSet, as the Deployment controller needs it.
pub(super) struct Current {
    pub name: String,
    pub uid: String,
}

fn owner_uid(rs: &ReplicaSet) -> Option<&str> {
    rs.metadata
        .owner_references
        .iter()
        .flatten()
        .find(|o| o.kind == "Deployment")
        .map(|o| o.uid.as_str())
}

fn replicas(rs: &ReplicaSet) -> i32 {
    rs.spec.replicas.unwrap_or(0)
}

/// The ReplicaSet object for `d`'s template `template` (already labelled with its hash).
fn build(d: &Deployment, name: &str, hash: &str, template: &Value, want: i32) -> Value {
    let mut selector = serde_json::to_value(&d.spec.selector).unwrap_or_default();
    selector["matchLabels"][TEMPLATE_HASH] = json!(hash);
    json!({
        "apiVersion": "apps/v1", "kind": "ReplicaSet",
        "metadata": {
            "name": name,
            "namespace": d.metadata.namespace.as_deref().unwrap_or("default"),
            "labels": template["metadata"]["labels"],
            "annotations": {"deployment.kubernetes.io/desired-replicas": want.to_string()},
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "Deployment",
                "name": d.metadata.name, "uid": d.metadata.uid, "controller": true,
                "blockOwnerDeletion": true}],
        },
        "spec": {"replicas": want, "selector": selector, "template": template},
    })
}

/// Makes `d`'s ReplicaSet for the template hashed `hash` exist with `want` replicas, and
/// scales its older ReplicaSets to 0.
pub(super) async fn ensure(
    client: &Client,
    all: &[ReplicaSet],
    d: &Deployment,
    hash: &str,
    template: &Value,
    want: i32,
) -> Result<Current, kube::Error> {
    let ns = d.metadata.namespace.as_deref().unwrap_or("default");
    let name = format!("{}-{hash}", d.metadata.name.as_deref().unwrap_or_default());
    let uid = d.metadata.uid.as_deref().unwrap_or_default();
    let api: Api<ReplicaSet> = Api::namespaced(client.clone(), ns);
    let scale = |n: i32| Patch::Merge(json!({"spec": {"replicas": n}}));
    for old in all.iter().filter(|rs| {
        owner_uid(rs) == Some(uid)
            && rs.metadata.name.as_deref() != Some(name.as_str())
            && replicas(rs) > 0
    }) {
        let old_name = old.metadata.name.as_deref().unwrap_or_default();
        api.patch(old_name, &PatchParams::default(), &scale(0))
            .await?;
    }
    let existing = all.iter().find(|rs| {
        rs.metadata.namespace.as_deref() == Some(ns) && rs.metadata.name.as_deref() == Some(&name)
    });
    let rs_uid = match existing {
        Some(rs) => {
            if replicas(rs) != want {
                api.patch(&name, &PatchParams::default(), &scale(want))
                    .await?;
            }
            rs.metadata.uid.clone()
        }
        None => {
            let obj: ReplicaSet = serde_json::from_value(build(d, &name, hash, template, want))
                .map_err(kube::Error::SerdeError)?;
            api.create(&PostParams::default(), &obj).await?.metadata.uid
        }
    };
    Ok(Current {
        name,
        uid: rs_uid.unwrap_or_default(),
    })
}

/// `kubectl get rs` counts: the ReplicaSet's live pods and how many of them run, written
/// when they change.
pub(super) async fn report_status(
    client: &Client,
    rs: &ReplicaSet,
    mine: &[&Pod],
) -> Result<(), kube::Error> {
    if rs.metadata.deletion_timestamp.is_some() {
        return Ok(());
    }
    let ns = rs.metadata.namespace.as_deref().unwrap_or("default");
    let name = rs.metadata.name.as_deref().unwrap_or_default();
    let count = mine.len() as i32;
    let ready = mine
        .iter()
        .filter(|p| p.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Running"))
        .count() as i32;
    let st = rs.status.clone().unwrap_or_default();
    let generation = rs.metadata.generation;
    if (
        st.replicas,
        st.ready_replicas.unwrap_or(0),
        st.observed_generation,
    ) == (count, ready, generation)
    {
        return Ok(());
    }
    // kube-apiserver leaves out counts of 0 but `replicas`; a null removes a count that fell
    // to 0, so both servers store and answer the same status.
    let some = |n: i32| if n == 0 { Value::Null } else { json!(n) };
    let patch = json!({"status": {"replicas": count, "readyReplicas": some(ready),
        "availableReplicas": some(ready), "fullyLabeledReplicas": some(count),
        "observedGeneration": generation}});
    let api: Api<ReplicaSet> = Api::namespaced(client.clone(), ns);
    api.patch_status(name, &PatchParams::default(), &Patch::Merge(&patch))
        .await?;
    Ok(())
}

/// Deletes the ReplicaSets whose Deployment is gone.
pub(super) async fn collect(
    client: &Client,
    all: &[ReplicaSet],
    deployments: &BTreeSet<String>,
) -> Result<(), kube::Error> {
    for rs in all.iter().filter(|rs| {
        rs.metadata.deletion_timestamp.is_none()
            && owner_uid(rs).is_some_and(|uid| !deployments.contains(uid))
    }) {
        let ns = rs.metadata.namespace.as_deref().unwrap_or("default");
        let api: Api<ReplicaSet> = Api::namespaced(client.clone(), ns);
        let name = rs.metadata.name.as_deref().unwrap_or_default();
        match api.delete(name, &DeleteParams::default()).await {
            Ok(_) => {}
            Err(kube::Error::Api(e)) if e.code == 404 => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}
