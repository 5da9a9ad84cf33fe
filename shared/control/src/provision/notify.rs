//! Telling people what a provisioning pass decided: `Nominated` and `FailedScheduling` Events
//! on pods and the decision events, through [`crate::events`].

use kerf_engine::plan::Unschedulable;
use serde_json::json;

use crate::ctx::Ctx;
use crate::events;
use crate::ports::publish::detail_types;
use crate::ports::{
    Cloud, Cluster, DecisionEvent, EventReason, EventSpec, EventType, InvolvedObject, Publisher,
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
            reason: EventReason::Nominated,
            message: format!("Pod should schedule on: {target}"),
        })
        .collect();
    events.extend(notes.unschedulable.iter().map(|u| EventSpec {
        involved: pod_ref(view, &u.pod),
        type_: EventType::Warning,
        reason: EventReason::FailedScheduling,
        message: format!("Failed to schedule pod, {}", u.reason),
    }));
    events::emit_all(ctx, events).await;
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
        events::publish(ctx, &[ev]).await;
    }
}
