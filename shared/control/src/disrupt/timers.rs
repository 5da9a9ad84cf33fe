//! The disruption function's timers ([`crate::ports::timer`]): sending them, and the moments a
//! pass arms them for.
//!
//! - [`arm_due`]: each managed node's next moment (`consolidateAfter` or `expireAfter`
//!   running out) within the longest SQS delay gets one timer, coalesced per moment; the
//!   moment is recorded on the NodeClaim (`kerf.dev/timer`) so later passes do not send it
//!   again (one timer per object and moment, never a storm).
//! - [`pod_events`]: pods that left a node move its NodeClaim's `status.lastPodEventTime` to
//!   now (Karpenter's pod-events controller, with its 10 s dedupe), which restarts
//!   `consolidateAfter`; the next pass arms the timer for the new moment.

use std::collections::BTreeMap;

use jiff::{SignedDuration, Timestamp};
use serde_json::json;

use crate::claim;
use crate::ctx::Ctx;
use crate::error::ControlError;
use crate::log::controllers::DISRUPTION;
use crate::ports::timer::MAX_DELAY;
use crate::ports::{Cloud, Cluster, Publisher, Queue, TimerKind};
use crate::view::View;

/// Annotation: the moment a timer was last armed for this NodeClaim.
pub const ARMED: &str = "kerf.dev/timer";
/// Karpenter's pod-events dedupe: `lastPodEventTime` moves at most this often.
pub const POD_EVENT_DEDUPE: SignedDuration = SignedDuration::from_secs(10);

/// Sends a timer as the disruption controller ([`crate::timers::set_timer`]).
pub async fn set_timer<C: Cluster, K: Cloud, P: Publisher, Q: Queue>(
    ctx: &Ctx<C, K, P>,
    queue: &Q,
    kind: TimerKind,
    due: Timestamp,
    objects: &[String],
) -> bool {
    crate::timers::set_timer(ctx, queue, DISRUPTION, kind, due, objects).await
}

/// A pass again, now.
pub async fn requeue<C: Cluster, K: Cloud, P: Publisher, Q: Queue>(
    ctx: &Ctx<C, K, P>,
    queue: &Q,
    why: &str,
) {
    ctx.log.debug(DISRUPTION, "requeueing", json!({"why": why}));
    set_timer(ctx, queue, TimerKind::Requeue, ctx.now(), &[]).await;
}

/// Arms one timer per due moment within [`MAX_DELAY`] that no earlier pass armed.
pub async fn arm_due<C: Cluster, K: Cloud, P: Publisher, Q: Queue>(
    ctx: &Ctx<C, K, P>,
    queue: &Q,
    view: &View,
    snapshot: &kerf_engine::Snapshot,
) -> Result<usize, ControlError> {
    let now = ctx.now();
    let mut by_moment: BTreeMap<Timestamp, Vec<String>> = BTreeMap::new();
    for (name, secs) in kerf_engine::due_moments(snapshot) {
        let Ok(at) = Timestamp::from_second(secs) else {
            continue;
        };
        if at > now + MAX_DELAY {
            continue;
        }
        let armed = view
            .snap
            .node_claims
            .iter()
            .find(|c| claim::name(c) == name)
            .and_then(|c| c.metadata.annotations.as_ref()?.get(ARMED).cloned());
        if armed.as_deref() != Some(claim::rfc3339(at).as_str()) {
            by_moment.entry(at).or_default().push(name);
        }
    }
    let mut n = 0;
    for (at, names) in by_moment {
        if !set_timer(ctx, queue, TimerKind::Due, at, &names).await {
            continue;
        }
        let a = BTreeMap::from([(ARMED.to_string(), claim::rfc3339(at))]);
        for name in &names {
            ctx.cluster.annotate_node_claim(name, &a).await?;
        }
        n += 1;
    }
    Ok(n)
}

/// Moves `lastPodEventTime` to now on the NodeClaims of `nodes` (unless it moved within
/// [`POD_EVENT_DEDUPE`]); how many moved.
pub async fn pod_events<C: Cluster, K: Cloud, P: Publisher>(
    ctx: &Ctx<C, K, P>,
    view: &View,
    nodes: &[String],
) -> Result<usize, ControlError> {
    let now = ctx.now();
    let mut n = 0;
    for c in &view.snap.node_claims {
        let mut status = claim::status(c);
        let on_node = status.node_name.as_ref().is_some_and(|x| nodes.contains(x));
        if !on_node || c.metadata.deletion_timestamp.is_some() {
            continue;
        }
        let last = status
            .last_pod_event_time
            .as_deref()
            .and_then(|s| s.parse::<Timestamp>().ok());
        if last.is_some_and(|t| now < t + POD_EVENT_DEDUPE) {
            continue;
        }
        status.last_pod_event_time = Some(claim::rfc3339(now));
        let rv = c.metadata.resource_version.as_deref();
        match ctx
            .cluster
            .patch_node_claim_status(claim::name(c), rv, &status)
            .await
        {
            Ok(_) => n += 1,
            // Someone else wrote it since the read: the next pod event moves it.
            Err(e) if e.is_conflict() || e.is_not_found() => {}
            Err(e) => return Err(e.into()),
        }
    }
    Ok(n)
}
