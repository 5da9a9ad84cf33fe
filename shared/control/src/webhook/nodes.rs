//! Node CREATE: the answer patches the Node with its NodeClaim's labels, taints, finalizer
//! and owner (see [`crate::register`]), so it is right from its first second. Nothing is
//! written from the review: anyone holding the webhook's URL can send one. The review only
//! wakes the provisioner (a hint, delayed so the Node is stored by then), whose pass records
//! the registration from the Node it reads from the API server ([`crate::register::register_pending`]).
//! A Node no launched claim knows is allowed as is.

use k8s_openapi::api::core::v1::Node;
use serde_json::json;

use super::{Request, Response};
use crate::claim;
use crate::ctx::Ctx;
use crate::log::{controllers::WEBHOOK, obj};
use crate::names::{INITIALIZED, NODEPOOL};
use crate::ports::{Cloud, Cluster, Publisher, Queue};
use crate::register::{claim_for, node_provider_id, registered_node};

/// How long the registration hint waits: the API server stores the Node once admission
/// answers, and the provisioner's pass must find it.
pub const REGISTRATION_HINT_DELAY_SECONDS: u32 = 2;

pub(super) async fn create<C: Cluster, K: Cloud, P: Publisher, Q: Queue>(
    ctx: &Ctx<C, K, P>,
    queue: &Q,
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
    if !req.dry_run {
        let body = json!({"reason": "NodeCreated", "node": node_name,
            "time": crate::claim::rfc3339(ctx.now())});
        if let Err(e) = queue
            .send(&body.to_string(), REGISTRATION_HINT_DELAY_SECONDS)
            .await
        {
            ctx.log.warn(
                WEBHOOK,
                "could not queue a registration request",
                json!({"NodeClaim": obj(claim::name(c)), "error": e.to_string()}),
            );
        }
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
