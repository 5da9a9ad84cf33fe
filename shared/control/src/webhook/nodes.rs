//! Node CREATE: nothing is written from the review, since anyone holding the webhook's URL
//! can send one. The review only wakes the provisioner (a hint, delayed so the Node is stored
//! by then), whose pass records the registration from the Node it reads from the API server
//! ([`crate::register::register_pending`]). The answer patches the Node with its NodeClaim's
//! labels, taints, finalizer and owner (see [`crate::register`]) only once EC2 confirms the
//! review: the instance of the Node's providerID is live, was launched for that NodeClaim
//! (its `karpenter.sh/nodeclaim` tag), and registers under the Node's name (its private DNS
//! name); otherwise the Node is allowed as is (its user data already gave it the claim's
//! labels and taints). A Node no launched claim knows is allowed as is.

use k8s_openapi::api::core::v1::Node;
use kerf_api::v1::NodeClaim;
use serde_json::json;

use super::{Request, Response};
use crate::claim;
use crate::claim::node_provider_id;
use crate::ctx::Ctx;
use crate::log::{controllers::WEBHOOK, obj};
use crate::names::{INITIALIZED, NODEPOOL};
use crate::ports::cloud::instance_id;
use crate::ports::{Cloud, CloudError, Cluster, Publisher, Queue};
use crate::registration::{claim_for, registered_node};

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
    let node_name = node
        .metadata
        .name
        .clone()
        .unwrap_or_else(|| req.name.clone());
    if !req.dry_run {
        hint(ctx, queue, c, &node_name).await;
    }
    match confirmed(ctx, c, &node_name, &pid).await {
        Ok(true) => {}
        Ok(false) => {
            ctx.log.warn(
                WEBHOOK,
                "node does not match the instance launched for its nodeclaim; admitted unpatched",
                json!({"Node": obj(&node_name), "NodeClaim": obj(claim::name(c)), "provider-id": pid}),
            );
            return Response::allow();
        }
        Err(e) => {
            ctx.log.warn(
                WEBHOOK,
                "could not check a node's instance; admitted unpatched",
                json!({"Node": obj(&node_name), "NodeClaim": obj(claim::name(c)), "error": e.to_string()}),
            );
            return Response::allow();
        }
    }
    let after = registered_node(&node, c);
    let (Ok(before_v), Ok(after_v)) = (serde_json::to_value(&node), serde_json::to_value(&after))
    else {
        return Response::allow();
    };
    let patch = json_patch::diff(&before_v, &after_v);
    Response {
        allowed: true,
        patch: serde_json::to_value(patch).ok(),
        ..Response::default()
    }
}

/// Wakes the provisioner, whose pass registers the Node it reads from the API server.
async fn hint<C: Cluster, K: Cloud, P: Publisher, Q: Queue>(
    ctx: &Ctx<C, K, P>,
    queue: &Q,
    c: &NodeClaim,
    node_name: &str,
) {
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

/// Whether EC2 confirms the review: the claim is not registered under another name, and the
/// instance of `pid` is live, was launched for the claim and registers as `node_name`.
async fn confirmed<C: Cluster, K: Cloud, P: Publisher>(
    ctx: &Ctx<C, K, P>,
    c: &NodeClaim,
    node_name: &str,
    pid: &str,
) -> Result<bool, CloudError> {
    let elsewhere = c
        .status
        .as_ref()
        .and_then(|s| s.node_name.as_deref())
        .is_some_and(|n| !n.is_empty() && n != node_name);
    let Some(id) = instance_id(pid).filter(|_| !elsewhere) else {
        return Ok(false);
    };
    let found = ctx.cloud.describe(&[id.to_string()]).await?;
    Ok(found.iter().any(|i| {
        i.id == id
            && i.provider_id == pid
            && !i.is_terminating()
            && i.node_claim() == Some(claim::name(c))
            && i.names_node(node_name)
    }))
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
