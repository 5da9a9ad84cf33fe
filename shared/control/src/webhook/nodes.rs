//! Node CREATE: the Node is registered with its NodeClaim as it is created (see
//! [`crate::register`]): the answer patches it with the claim's labels, taints, finalizer and
//! owner, and the claim records `Registered`. A Node no launched claim knows is allowed as is.

use k8s_openapi::api::core::v1::Node;
use serde_json::json;

use super::{Request, Response};
use crate::claim;
use crate::ctx::Ctx;
use crate::log::{controllers::WEBHOOK, obj};
use crate::names::{INITIALIZED, NODEPOOL};
use crate::ports::{Cloud, Cluster, Publisher, Queue};
use crate::register::{claim_for, node_provider_id, record, registered_node};

pub(super) async fn create<C: Cluster, K: Cloud, P: Publisher>(
    ctx: &Ctx<C, K, P>,
    req: &Request,
) -> Response {
    let Ok(node) = serde_json::from_value::<Node>(req.object.clone()) else {
        ctx.log.warn(
            WEBHOOK,
            "could not read node in admission request",
            json!({"name": req.name}),
        );
        return Response::allow();
    };
    let Some(pid) = node_provider_id(&node).map(str::to_string) else {
        return Response::allow();
    };
    let claims = match ctx.cluster.node_claims().await {
        Ok(c) => c,
        Err(e) => {
            ctx.log.warn(
                WEBHOOK,
                "could not list nodeclaims to register a node",
                json!({"Node": obj(&req.name), "error": e.to_string()}),
            );
            return Response::allow();
        }
    };
    let Some(c) = claim_for(&claims, &pid) else {
        return Response::allow();
    };
    let after = registered_node(&node, c);
    let (Ok(before_v), Ok(after_v)) = (serde_json::to_value(&node), serde_json::to_value(&after))
    else {
        return Response::allow();
    };
    let patch = json_patch::diff(&before_v, &after_v);
    let node_name = node
        .metadata
        .name
        .clone()
        .unwrap_or_else(|| req.name.clone());
    if !req.dry_run
        && let Err(e) = record(ctx, c, &node_name).await
    {
        ctx.log.warn(
            WEBHOOK,
            "could not record the registration",
            json!({"NodeClaim": obj(claim::name(c)), "error": e.to_string()}),
        );
    }
    Response {
        allowed: true,
        patch: serde_json::to_value(patch).ok(),
        ..Response::default()
    }
}

fn ready(n: &Node) -> bool {
    n.status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .is_some_and(|cs| cs.iter().any(|c| c.type_ == "Ready" && c.status == "True"))
}

fn taint_count(n: &Node) -> usize {
    n.spec
        .as_ref()
        .and_then(|s| s.taints.as_ref())
        .map_or(0, Vec::len)
}

/// A Kerf node that is not initialized yet became Ready or lost a taint: wake the
/// provisioner, which initializes its NodeClaim (instead of waiting for the sweep).
pub(super) async fn update<C: Cluster, K: Cloud, P: Publisher, Q: Queue>(
    ctx: &Ctx<C, K, P>,
    queue: &Q,
    req: &Request,
) -> Response {
    let (Ok(node), Some(Ok(old))) = (
        serde_json::from_value::<Node>(req.object.clone()),
        req.old_object.clone().map(serde_json::from_value::<Node>),
    ) else {
        return Response::allow();
    };
    let labels = node.metadata.labels.clone().unwrap_or_default();
    let ours = labels.contains_key(NODEPOOL) && labels.get(INITIALIZED).is_none_or(|v| v != "true");
    let progressed = (ready(&node) && !ready(&old)) || taint_count(&node) < taint_count(&old);
    if ours && progressed && !req.dry_run {
        let body = json!({"reason": "NodeProgressed", "node": req.name, "time": crate::claim::rfc3339(ctx.now())});
        if let Err(e) = queue.send(&body.to_string(), 0).await {
            ctx.log.warn(
                WEBHOOK,
                "could not queue an initialization request",
                json!({"Node": obj(&req.name), "error": e.to_string()}),
            );
        }
    }
    Response::allow()
}
