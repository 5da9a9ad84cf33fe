//! Telling people what a pass decided: `Nominated` and `FailedScheduling` Events on pods,
//! Events on NodeClaims, and decision events (best effort: a failed publish or Event is
//! logged, never fails the reconcile).

use futures::StreamExt;
use futures::stream;
use kerf_api::v1::NodeClaim;
use kerf_engine::plan::Unschedulable;
use serde_json::json;

use crate::claim;
use crate::ctx::Ctx;
use crate::log::controllers::PROVISIONER;
use crate::ports::publish::detail_types;
use crate::ports::{
    Cloud, Cluster, DecisionEvent, EventSpec, EventType, InvolvedObject, Publisher,
};
use crate::view::View;

/// At most this many pods are listed in one decision event.
const MAX_PODS_PER_EVENT: usize = 100;

/// What a pass has to say about pods.
#[derive(Debug, Default)]
pub(super) struct Notes {
    /// (pod key, `node/<name>` or `nodeclaim/<name>`).
    pub nominated: Vec<(String, String)>,
    pub unschedulable: Vec<Unschedulable>,
}

fn pod_ref(view: &View, key: &str) -> InvolvedObject {
    let (ns, name) = key.split_once('/').unwrap_or(("default", key));
    InvolvedObject {
        api_version: "v1".into(),
        kind: "Pod".into(),
        name: name.into(),
        namespace: ns.into(),
        uid: view
            .pod(key)
            .and_then(|p| p.metadata.uid.clone())
            .unwrap_or_default(),
    }
}

/// Emits the Events and the `Pods Unschedulable` decision event.
pub(super) async fn send<C: Cluster, K: Cloud, P: Publisher>(
    ctx: &Ctx<C, K, P>,
    view: &View,
    notes: Notes,
) {
    let mut events: Vec<EventSpec> = notes
        .nominated
        .iter()
        .map(|(pod, target)| EventSpec {
            involved: pod_ref(view, pod),
            type_: EventType::Normal,
            reason: "Nominated".into(),
            message: format!("Pod should schedule on: {target}"),
        })
        .collect();
    events.extend(notes.unschedulable.iter().map(|u| EventSpec {
        involved: pod_ref(view, &u.pod),
        type_: EventType::Warning,
        reason: "FailedScheduling".into(),
        message: format!("Failed to schedule pod, {}", u.reason),
    }));
    emit_all(ctx, events).await;
    if !notes.unschedulable.is_empty() {
        let pods: Vec<_> = notes
            .unschedulable
            .iter()
            .take(MAX_PODS_PER_EVENT)
            .map(|u| json!({"pod": u.pod, "reason": u.reason}))
            .collect();
        let ev = DecisionEvent {
            detail_type: detail_types::PODS_UNSCHEDULABLE.into(),
            detail: json!({"count": notes.unschedulable.len(), "pods": pods}),
            resources: vec![],
        };
        publish(ctx, &[ev]).await;
    }
}

/// Emits Events with bounded concurrency; failures are logged.
pub async fn emit_all<C: Cluster, K: Cloud, P: Publisher>(
    ctx: &Ctx<C, K, P>,
    events: Vec<EventSpec>,
) {
    let now = ctx.now();
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

/// A Warning Event on a NodeClaim.
pub(crate) async fn claim_event<C: Cluster, K: Cloud, P: Publisher>(
    ctx: &Ctx<C, K, P>,
    c: &NodeClaim,
    reason: &str,
    message: &str,
) {
    claim_event_of(ctx, c, EventType::Warning, reason, message).await;
}

/// An Event of `type_` on a NodeClaim.
pub(crate) async fn claim_event_of<C: Cluster, K: Cloud, P: Publisher>(
    ctx: &Ctx<C, K, P>,
    c: &NodeClaim,
    type_: EventType,
    reason: &str,
    message: &str,
) {
    let ev = EventSpec {
        involved: InvolvedObject {
            api_version: "karpenter.sh/v1".into(),
            kind: "NodeClaim".into(),
            name: claim::name(c).to_string(),
            namespace: String::new(),
            uid: c.metadata.uid.clone().unwrap_or_default(),
        },
        type_,
        reason: reason.into(),
        message: message.into(),
    };
    emit_all(ctx, vec![ev]).await;
}

/// Publishes decision events; a failure is logged.
pub(crate) async fn publish<C: Cluster, K: Cloud, P: Publisher>(
    ctx: &Ctx<C, K, P>,
    events: &[DecisionEvent],
) {
    if let Err(e) = ctx.publisher.publish(events).await {
        ctx.log.warn(
            PROVISIONER,
            "could not publish decision events",
            json!({"error": e.to_string(), "events": events.len()}),
        );
    }
}
