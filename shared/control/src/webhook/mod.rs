//! The admission webhook: AdmissionReview v1 in, AdmissionReview out.
//!
//! - Kerf's CRDs (NodePool, EC2NodeClass, NodeClaim): validated ([`validate`]); denied with
//!   every problem, each naming its field. A NodePool or EC2NodeClass created or whose spec
//!   changed wakes the disruption function ([`classes`]), which writes their statuses and
//!   looks for drift at once, so `kubectl get nodepools` shows READY within seconds.
//! - `pods/status` updates that mark a pod `PodScheduled=False/Unschedulable`: a
//!   provisioning hint on the queue ([`pods`]); always allowed.
//! - Node CREATE: the registration patch for its NodeClaim and a hint that wakes the
//!   provisioner, which records the registration from the stored Node ([`nodes`]); nothing
//!   is written from the review; always allowed.
//! - Node updates that may complete initialization (Ready, startup taints removed): a hint.
//!
//! A Kerf failure never blocks a workload: anything that goes wrong for a pod or a node is
//! logged and the request allowed. Dry-run requests have no side effects.

pub mod classes;
pub mod config;
pub mod nodes;
pub mod pods;
pub mod validate;

use base64::Engine;
use serde_json::{Value, json};

use crate::ctx::Ctx;
use crate::log::controllers::WEBHOOK;
use crate::ports::{Cloud, Cluster, Publisher, Queue};

/// The parts of an AdmissionRequest the webhook reads.
#[derive(Debug, Clone, PartialEq)]
pub struct Request {
    pub uid: String,
    pub group: String,
    pub kind: String,
    pub resource: String,
    pub sub_resource: String,
    pub operation: String,
    pub name: String,
    pub namespace: String,
    pub object: Value,
    pub old_object: Option<Value>,
    pub dry_run: bool,
}

/// The webhook's answer.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Response {
    pub allowed: bool,
    /// Why not, when denied.
    pub message: Option<String>,
    /// A JSONPatch to apply, when mutating.
    pub patch: Option<Value>,
    pub warnings: Vec<String>,
}

impl Response {
    pub fn allow() -> Self {
        Response {
            allowed: true,
            ..Response::default()
        }
    }

    pub fn deny(message: impl Into<String>) -> Self {
        Response {
            allowed: false,
            message: Some(message.into()),
            ..Response::default()
        }
    }
}

fn s(v: &Value) -> String {
    v.as_str().unwrap_or_default().to_string()
}

/// What an AdmissionReview lacks for the webhook to answer it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum ReviewError {
    #[error("body is not an AdmissionReview")]
    NotAReview,
    #[error("AdmissionReview has no request")]
    NoRequest,
    #[error("request.uid is missing")]
    NoUid,
}

/// Reads the request out of an AdmissionReview; `Err` says what is missing.
pub fn parse(review: &Value) -> Result<Request, ReviewError> {
    if review["kind"] != "AdmissionReview" {
        return Err(ReviewError::NotAReview);
    }
    let r = review
        .get("request")
        .filter(|r| r.is_object())
        .ok_or(ReviewError::NoRequest)?;
    let uid = s(&r["uid"]);
    if uid.is_empty() {
        return Err(ReviewError::NoUid);
    }
    Ok(Request {
        uid,
        group: s(&r["kind"]["group"]),
        kind: s(&r["kind"]["kind"]),
        resource: s(&r["resource"]["resource"]),
        sub_resource: s(&r["subResource"]),
        operation: s(&r["operation"]),
        name: s(&r["name"]),
        namespace: s(&r["namespace"]),
        object: r["object"].clone(),
        old_object: r.get("oldObject").filter(|o| !o.is_null()).cloned(),
        dry_run: r["dryRun"].as_bool().unwrap_or(false),
    })
}

/// The AdmissionReview answering request `uid`.
pub fn review(uid: &str, r: &Response) -> Value {
    let mut resp = json!({"uid": uid, "allowed": r.allowed});
    if let Some(m) = &r.message {
        resp["status"] = json!({"code": 403, "reason": "Forbidden", "message": m});
    }
    if let Some(p) = &r.patch {
        resp["patchType"] = json!("JSONPatch");
        resp["patch"] = json!(base64::engine::general_purpose::STANDARD.encode(p.to_string()));
    }
    if !r.warnings.is_empty() {
        resp["warnings"] = json!(r.warnings);
    }
    json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "response": resp})
}

/// Whether a failure answering this request must let it through (pods, nodes, anything
/// that is not one of Kerf's CRDs).
pub fn fails_open(req: &Request) -> bool {
    validate::Kind::of(&req.group, &req.kind).is_none()
}

/// The answer for one of Kerf's CRDs, from the object alone (no client, no side effect):
/// `None` for anything else. Invalid objects are denied with every problem.
pub fn check(req: &Request) -> Option<Response> {
    let kind = validate::Kind::of(&req.group, &req.kind)?;
    if req.operation == "DELETE" {
        return Some(Response::allow());
    }
    let errors = validate::validate(kind, &req.object, req.old_object.as_ref());
    if errors.is_empty() {
        return Some(Response::allow());
    }
    Some(Response::deny(format!(
        "{} {:?} is invalid: {}",
        req.kind,
        req.name,
        errors.join("; ")
    )))
}

/// The answer when Kerf cannot act on a request (no Kubernetes client, or out of time):
/// Kerf's CRDs validated all the same ([`check`]), everything else allowed.
pub fn offline(req: &Request) -> Response {
    check(req).unwrap_or_else(Response::allow)
}

/// Answers one admission request.
pub async fn admit<C: Cluster, K: Cloud, P: Publisher, Q: Queue>(
    ctx: &Ctx<C, K, P>,
    queue: &Q,
    disruption: &Q,
    req: &Request,
) -> Response {
    if let Some(resp) = check(req) {
        let kind = validate::Kind::of(&req.group, &req.kind);
        match (kind, resp.allowed) {
            (Some(kind), true) if req.operation != "DELETE" => {
                // Boxed: admission runs inside every API call's future in the simulated cluster.
                Box::pin(classes::changed(ctx, queue, disruption, kind, req)).await;
            }
            (_, false) => ctx.log.info(
                WEBHOOK,
                "denied invalid object",
                json!({"kind": req.kind, "name": req.name, "errors": resp.message}),
            ),
            _ => {}
        }
        return resp;
    }
    match (
        req.group.as_str(),
        req.resource.as_str(),
        req.sub_resource.as_str(),
        req.operation.as_str(),
    ) {
        ("", "pods", "status", "UPDATE") => pods::status_update(ctx, queue, req).await,
        ("", "pods", "", "DELETE") => pods::deleted(ctx, disruption, req).await,
        ("", "nodes", "", "CREATE") => nodes::create(ctx, queue, req).await,
        ("", "nodes", _, "UPDATE") => nodes::update(ctx, queue, req).await,
        _ => Response::allow(),
    }
}

#[cfg(test)]
#[path = "mod_tests.rs"]
mod tests;
