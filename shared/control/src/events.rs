//! Kubernetes Events and decision events, for every reconciler: best effort (a failed Event or
//! publish is logged, never fails the reconcile).

use futures::StreamExt;
use futures::stream;
use k8s_openapi::api::core::v1::Node;
use kerf_api::v1::NodeClaim;
use serde_json::json;

use crate::claim;
use crate::ctx::Ctx;
use crate::log::controllers::PROVISIONER;
use crate::ports::{
    Cloud, Cluster, DecisionEvent, EventReason, EventSpec, EventType, InvolvedObject, Publisher,
};
use crate::redact;

/// Emits Events with bounded concurrency; failures are logged.
pub async fn emit_all<C: Cluster, K: Cloud, P: Publisher>(
    ctx: &Ctx<C, K, P>,
    events: Vec<EventSpec>,
) {
    let now = ctx.now();
    let events: Vec<EventSpec> = events.into_iter().map(scrubbed).collect();
    let failures: Vec<String> = stream::iter(events.iter().map(|e| async move {
        ctx.cluster
            .emit_event(e, now)
            .await
            .err()
            .map(|err| err.to_string())
    }))
    .buffer_unordered(ctx.settings.concurrency.max(1))
    .filter_map(|r| async move { r })
    .collect()
    .await;
    if let Some(first) = failures.first() {
        ctx.log.warn(
            PROVISIONER,
            "could not record events",
            json!({"failed": failures.len(), "error": first}),
        );
    }
}

/// `e` with any URL in its message scrubbed ([`crate::redact`]): Events are readable by
/// anyone who can read the namespace.
fn scrubbed(mut e: EventSpec) -> EventSpec {
    if let std::borrow::Cow::Owned(clean) = redact::scrub(&e.message) {
        e.message = clean;
    }
    e
}

/// A Warning Event on a NodeClaim.
pub async fn claim_event<C: Cluster, K: Cloud, P: Publisher>(
    ctx: &Ctx<C, K, P>,
    c: &NodeClaim,
    reason: EventReason,
    message: &str,
) {
    claim_event_of(ctx, c, EventType::Warning, reason, message).await;
}

/// An Event of `type_` on a NodeClaim.
pub async fn claim_event_of<C: Cluster, K: Cloud, P: Publisher>(
    ctx: &Ctx<C, K, P>,
    c: &NodeClaim,
    type_: EventType,
    reason: EventReason,
    message: &str,
) {
    let ev = EventSpec {
        involved: claim_object(c),
        type_,
        reason,
        message: message.into(),
    };
    emit_all(ctx, vec![ev]).await;
}

/// A NodeClaim as the object of an Event.
pub fn claim_object(c: &NodeClaim) -> InvolvedObject {
    InvolvedObject {
        api_version: "karpenter.sh/v1".into(),
        kind: "NodeClaim".into(),
        name: claim::name(c).to_string(),
        namespace: String::new(),
        uid: c.metadata.uid.clone().unwrap_or_default(),
    }
}

/// A Node as the object of an Event.
pub fn node_object(n: &Node) -> InvolvedObject {
    InvolvedObject {
        api_version: "v1".into(),
        kind: "Node".into(),
        name: n.metadata.name.clone().unwrap_or_default(),
        namespace: String::new(),
        uid: n.metadata.uid.clone().unwrap_or_default(),
    }
}

/// Publishes decision events; a failure is logged.
pub async fn publish<C: Cluster, K: Cloud, P: Publisher>(
    ctx: &Ctx<C, K, P>,
    events: &[DecisionEvent],
) {
    let events: Vec<DecisionEvent> = events
        .iter()
        .cloned()
        .map(|mut e| {
            redact::scrub_value(&mut e.detail);
            e
        })
        .collect();
    if let Err(e) = ctx.publisher.publish(&events).await {
        ctx.log.warn(
            PROVISIONER,
            "could not publish decision events",
            json!({"error": e.to_string(), "events": events.len()}),
        );
    }
}
