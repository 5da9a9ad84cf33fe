//! NodeClaim writers: create (generateName, ownerReference, finalizer), status, conditions.

use crate::error::{ClusterError, KubeResult};
use crate::retry::on_conflict;
use crate::write::patch_if_unchanged;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use kerf_api::v1::{Condition, NodeClaim, NodeClaimStatus, NodePool};
use kube::api::{Api, PostParams};
use kube::{Client, Resource};
use serde_json::{Value, json};

use kerf_labels::{NODEPOOL as NODEPOOL_LABEL, TERMINATION_FINALIZER};

/// Fills in what the provisioner sets on every NodeClaim it creates for `pool`.
pub fn prepare(pool: &NodePool, mut claim: NodeClaim) -> NodeClaim {
    let pool_name = pool.metadata.name.clone().unwrap_or_default();
    let m = &mut claim.metadata;
    if m.name.is_none() && m.generate_name.is_none() {
        m.generate_name = Some(format!("{pool_name}-"));
    }
    m.labels
        .get_or_insert_default()
        .insert(NODEPOOL_LABEL.into(), pool_name.clone());
    let finalizers = m.finalizers.get_or_insert_default();
    if !finalizers.iter().any(|f| f == TERMINATION_FINALIZER) {
        finalizers.push(TERMINATION_FINALIZER.into());
    }
    let owner = OwnerReference {
        api_version: NodePool::api_version(&()).into_owned(),
        kind: NodePool::kind(&()).into_owned(),
        name: pool_name,
        uid: pool.metadata.uid.clone().unwrap_or_default(),
        block_owner_deletion: Some(true),
        controller: None,
    };
    let owners = m.owner_references.get_or_insert_default();
    if !owners.iter().any(|o| o.uid == owner.uid) {
        owners.push(owner);
    }
    claim
}

/// Creates a NodeClaim. With an explicit name the call is idempotent: if it already exists
/// it is returned as is. With generateName every call creates a new object.
pub async fn create(
    client: &Client,
    pool: &NodePool,
    claim: NodeClaim,
) -> Result<NodeClaim, ClusterError> {
    let api: Api<NodeClaim> = Api::all(client.clone());
    let claim = prepare(pool, claim);
    match api.create(&PostParams::default(), &claim).await {
        Err(kube::Error::Api(s)) if s.reason == "AlreadyExists" => {
            let name = claim.metadata.name.clone().unwrap_or_default();
            Ok(api.get(&name).await.kube()?)
        }
        other => Ok(other.kube()?),
    }
}

/// Writes `.status` through the status subresource.
pub async fn patch_status(
    client: &Client,
    name: &str,
    resource_version: Option<&str>,
    status: &NodeClaimStatus,
) -> Result<NodeClaim, ClusterError> {
    let api: Api<NodeClaim> = Api::all(client.clone());
    let status = serde_json::to_value(status).map_err(|e| ClusterError::Fatal(e.to_string()))?;
    let rv = match resource_version {
        Some(rv) => rv.to_string(),
        None => api
            .get(name)
            .await
            .kube()?
            .metadata
            .resource_version
            .unwrap_or_default(),
    };
    patch_if_unchanged(&api, name, &rv, json!({"status": status}), true).await
}

/// Upserts `updates` into `current` by type; an unchanged status keeps its
/// lastTransitionTime, an empty lastTransitionTime is set to `now`.
pub fn merge_conditions(current: &[Value], updates: &[Value], now: &str) -> Vec<Value> {
    let mut out = current.to_vec();
    for u in updates {
        let mut u = u.clone();
        let pos = out.iter().position(|c| c["type"] == u["type"]);
        let keep_time = pos.map(|i| &out[i]).filter(|c| c["status"] == u["status"]);
        let time = keep_time.map(|c| c["lastTransitionTime"].clone());
        match time {
            Some(t) => u["lastTransitionTime"] = t,
            None if u["lastTransitionTime"].as_str().is_none_or(str::is_empty) => {
                u["lastTransitionTime"] = json!(now)
            }
            None => {}
        }
        match pos {
            Some(i) => out[i] = u,
            None => out.push(u),
        }
    }
    out
}

/// Upserts conditions (read, merge, conditional status patch; retried on conflict).
pub async fn set_conditions(
    client: &Client,
    name: &str,
    conditions: &[Condition],
    now: jiff::Timestamp,
) -> Result<NodeClaim, ClusterError> {
    let api: Api<NodeClaim> = Api::all(client.clone());
    let updates =
        serde_json::to_value(conditions).map_err(|e| ClusterError::Fatal(e.to_string()))?;
    let updates = updates.as_array().cloned().unwrap_or_default();
    on_conflict(|| async {
        let nc = api.get(name).await.kube()?;
        let current = serde_json::to_value(&nc.status).unwrap_or(Value::Null);
        let current = current["conditions"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        let now = now.strftime("%Y-%m-%dT%H:%M:%SZ").to_string();
        let merged = merge_conditions(&current, &updates, &now);
        if merged == current {
            return Ok(nc);
        }
        let rv = nc.metadata.resource_version.clone().unwrap_or_default();
        patch_if_unchanged(
            &api,
            name,
            &rv,
            json!({"status": {"conditions": merged}}),
            true,
        )
        .await
    })
    .await
}

/// Merges `labels` into a NodeClaim's metadata (a merge patch; no-op when already there).
/// Merges `labels` into a NodeClaim's (a `null` value removes the key).
pub async fn label(
    client: &Client,
    name: &str,
    labels: &impl serde::Serialize,
) -> Result<NodeClaim, ClusterError> {
    let api: Api<NodeClaim> = Api::all(client.clone());
    let patch = json!({"metadata": {"labels": labels}});
    api.patch(
        name,
        &kube::api::PatchParams::default(),
        &kube::api::Patch::Merge(&patch),
    )
    .await
    .kube()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conditions_keep_transition_time_when_status_unchanged() {
        let cur = vec![
            json!({"type": "Launched", "status": "True", "lastTransitionTime": "t0", "reason": "A"}),
        ];
        let upd = vec![
            json!({"type": "Launched", "status": "True", "lastTransitionTime": "", "reason": "B"}),
            json!({"type": "Registered", "status": "False", "lastTransitionTime": ""}),
        ];
        let out = merge_conditions(&cur, &upd, "t1");
        assert_eq!(out[0]["lastTransitionTime"], "t0");
        assert_eq!(out[0]["reason"], "B");
        assert_eq!(out[1]["lastTransitionTime"], "t1");
    }
}
