//! `pods/status` updates: a pod that kube-scheduler has just marked unschedulable becomes a
//! provisioning hint on the queue (the provisioner reads the truth from a snapshot; the
//! message only wakes it), and a pod that has just started running is timed for
//! `karpenter_pods_startup_duration_seconds`. A pod deleted from a node is a pod event for
//! the disruption function (a timer message naming the node: it restarts the node's
//! `consolidateAfter`, as Karpenter's pod-events controller does). Always allowed.

use jiff::Timestamp;
use k8s_openapi::api::core::v1::Pod;
use serde_json::json;

use super::{Request, Response};
use crate::ctx::Ctx;
use crate::log::controllers::WEBHOOK;
use crate::metrics::names::PODS_STARTUP_DURATION;
use crate::ports::{Cloud, Cluster, Publisher, Queue, Timer, TimerKind};
use crate::view::{is_provisionable, key};

/// The body of a provisioning hint: `pods` arrived at `now`.
pub fn hint(pods: &[String], now: Timestamp) -> String {
    crate::ports::hint::Hint::new(pods, now).body()
}

fn phase(p: &Pod) -> &str {
    p.status
        .as_ref()
        .and_then(|s| s.phase.as_deref())
        .unwrap_or_default()
}

pub(super) async fn status_update<C: Cluster, K: Cloud, P: Publisher, Q: Queue>(
    ctx: &Ctx<C, K, P>,
    queue: &Q,
    req: &Request,
) -> Response {
    let Ok(pod) = serde_json::from_value::<Pod>(req.object.clone()) else {
        ctx.log.warn(
            WEBHOOK,
            "could not read pod in admission request",
            json!({"name": req.name}),
        );
        return Response::allow();
    };
    let old: Option<Pod> = req
        .old_object
        .clone()
        .and_then(|o| serde_json::from_value(o).ok());
    let was_running = old.as_ref().is_some_and(|o| phase(o) == "Running");
    if phase(&pod) == "Running" && !was_running {
        if let Some(created) = &pod.metadata.creation_timestamp {
            let secs = ctx.now().duration_since(created.0).as_secs_f64().max(0.0);
            ctx.metrics.observe(PODS_STARTUP_DURATION, &[], secs);
        }
        return Response::allow();
    }
    if !is_provisionable(&pod) || req.dry_run {
        return Response::allow();
    }
    let body = hint(&[key(&pod)], ctx.now());
    if let Err(e) = queue.send(&body, 0).await {
        ctx.log.error(
            WEBHOOK,
            "could not queue a provisioning request",
            json!({"Pod": {"name": req.name, "namespace": req.namespace}, "error": e.to_string()}),
        );
    }
    Response::allow()
}

/// A pod deleted from a node: a pod event for the disruption function.
pub(super) async fn deleted<C: Cluster, K: Cloud, P: Publisher, Q: Queue>(
    ctx: &Ctx<C, K, P>,
    disruption: &Q,
    req: &Request,
) -> Response {
    let node = req
        .old_object
        .as_ref()
        .and_then(|o| o["spec"]["nodeName"].as_str())
        .filter(|n| !n.is_empty());
    let Some(node) = node else {
        return Response::allow();
    };
    if req.dry_run {
        return Response::allow();
    }
    let t = Timer::new(TimerKind::PodEvent, ctx.now(), vec![node.to_string()]);
    if let Err(e) = t.send(disruption, ctx.now()).await {
        ctx.log.warn(
            WEBHOOK,
            "could not send a pod event",
            json!({"Pod": {"name": req.name, "namespace": req.namespace}, "error": e.to_string()}),
        );
    }
    Response::allow()
}
