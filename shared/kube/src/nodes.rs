//! Node writers: taint, untaint, cordon. Each reads the node and writes with a
//! resourceVersion precondition, retrying on conflict; a write that changes nothing is skipped.

use crate::error::{ClusterError, KubeResult};
use crate::retry::on_conflict;
use crate::write::patch_if_unchanged;
use k8s_openapi::api::core::v1::{Node, Taint};
use kube::Client;
use kube::api::Api;
use serde_json::json;

/// The taints after adding `taint` (replacing one with the same key and effect).
pub fn with_taint(current: &[Taint], taint: &Taint) -> Vec<Taint> {
    let mut out: Vec<Taint> = current
        .iter()
        .filter(|t| !(t.key == taint.key && t.effect == taint.effect))
        .cloned()
        .collect();
    out.push(taint.clone());
    out
}

/// The taints after removing every taint with `key`.
pub fn without_taint(current: &[Taint], key: &str) -> Vec<Taint> {
    current.iter().filter(|t| t.key != key).cloned().collect()
}

async fn update_taints<F>(client: &Client, node: &str, change: F) -> Result<Node, ClusterError>
where
    F: Fn(&[Taint]) -> Vec<Taint>,
{
    let api: Api<Node> = Api::all(client.clone());
    on_conflict(|| async {
        let n = api.get(node).await.kube()?;
        let current = n
            .spec
            .as_ref()
            .and_then(|s| s.taints.clone())
            .unwrap_or_default();
        let next = change(&current);
        if next == current {
            return Ok(n);
        }
        let rv = n.metadata.resource_version.clone().unwrap_or_default();
        patch_if_unchanged(&api, node, &rv, json!({"spec": {"taints": next}}), false).await
    })
    .await
}

/// Adds a taint.
pub async fn taint(client: &Client, node: &str, taint: &Taint) -> Result<Node, ClusterError> {
    update_taints(client, node, |cur| {
        let has = cur.iter().any(|t| t == taint);
        if has {
            cur.to_vec()
        } else {
            with_taint(cur, taint)
        }
    })
    .await
}

/// Removes taints by key.
pub async fn untaint(client: &Client, node: &str, key: &str) -> Result<Node, ClusterError> {
    update_taints(client, node, |cur| without_taint(cur, key)).await
}

/// Sets `spec.unschedulable`.
pub async fn cordon(
    client: &Client,
    node: &str,
    unschedulable: bool,
) -> Result<Node, ClusterError> {
    let api: Api<Node> = Api::all(client.clone());
    on_conflict(|| async {
        let n = api.get(node).await.kube()?;
        let current = n
            .spec
            .as_ref()
            .and_then(|s| s.unschedulable)
            .unwrap_or(false);
        if current == unschedulable {
            return Ok(n);
        }
        let rv = n.metadata.resource_version.clone().unwrap_or_default();
        let value = if unschedulable {
            json!(true)
        } else {
            json!(null)
        };
        patch_if_unchanged(
            &api,
            node,
            &rv,
            json!({"spec": {"unschedulable": value}}),
            false,
        )
        .await
    })
    .await
}
