//! Waiting for volumes to detach, as Karpenter's `awaitVolumeDetachment` does: once a node is
//! drained, its instance is terminated only when the node's VolumeAttachments are gone, so
//! the volumes of the evicted pods follow them cleanly to their new nodes. Attachments of
//! volumes used by pods the drain leaves in place (pods tolerating `karpenter.sh/disrupted`,
//! mirror pods, pods stuck terminating) do not count: nothing will ever detach them.
//! Past the termination grace period's deadline the wait is skipped.
//!
//! The NodeClaim's `VolumesDetached` condition says where the wait stands: Unknown
//! (`AwaitingVolumeDetachment`) while waiting, True once nothing is attached, False
//! (`TerminationGracePeriodElapsed`) when the wait was skipped. A failed read of the
//! attachments never lets the instance go early: the pass is re-queued.

use std::collections::BTreeSet;

use jiff::Timestamp;
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::api::storage::v1::VolumeAttachment;
use kerf_api::v1::{Condition, ConditionStatus, NodeClaim};
use serde_json::json;

use super::{Step, drain};
use crate::claim::{self, condition};
use crate::ctx::Ctx;
use crate::error::ControlError;
use crate::log::{controllers::TERMINATION, obj};
use crate::ports::{
    Cloud, Cluster, ClusterError, EventReason, EventSpec, EventType, InvolvedObject, Publisher,
};

pub use crate::teardown::VOLUMES_DETACHED;
/// Reason (and message) while attachments remain.
pub const AWAITING: &str = EventReason::AwaitingVolumeDetachment.as_str();
/// Reason (and message) when the grace period ran out first.
pub const ELAPSED: &str = "TerminationGracePeriodElapsed";
/// Wait between checks of the attachments.
pub const VOLUME_REQUEUE: u32 = 5;

/// Where the wait for a node's volumes stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Volumes {
    /// No attachment holds the node.
    Detached,
    /// These attachments (by name) still hold it.
    Attached(Vec<String>),
    /// The grace period's deadline has passed; these attachments are left behind.
    Elapsed(Vec<String>),
    /// The attachments could not be read before the deadline: check again.
    Unreadable(ClusterError),
}

impl Volumes {
    /// The `VolumesDetached` condition to record, if any.
    pub fn condition(&self) -> Option<Condition> {
        match self {
            Volumes::Detached => Some(condition(
                VOLUMES_DETACHED,
                ConditionStatus::True,
                VOLUMES_DETACHED,
                "",
            )),
            Volumes::Attached(_) => Some(condition(
                VOLUMES_DETACHED,
                ConditionStatus::Unknown,
                AWAITING,
                AWAITING,
            )),
            Volumes::Elapsed(_) => Some(condition(
                VOLUMES_DETACHED,
                ConditionStatus::False,
                ELAPSED,
                ELAPSED,
            )),
            Volumes::Unreadable(_) => None,
        }
    }

    /// The requeue while the node must wait; `None` when the instance may go.
    pub fn wait(&self) -> Option<Step> {
        match self {
            Volumes::Attached(names) => Some(Step::Requeue {
                seconds: VOLUME_REQUEUE,
                why: format!("{} volume attachment(s) remain", names.len()),
            }),
            Volumes::Unreadable(e) => Some(Step::Requeue {
                seconds: VOLUME_REQUEUE,
                why: format!("could not read volume attachments: {e}"),
            }),
            Volumes::Detached | Volumes::Elapsed(_) => None,
        }
    }
}

/// The claims (namespace, name) mounted by pods the drain does not evict.
pub fn undrainable_claims(pods: &[Pod], now: Timestamp) -> BTreeSet<(String, String)> {
    pods.iter()
        .filter(|p| !drain::drainable(p, now))
        .flat_map(|p| {
            let ns = p.metadata.namespace.clone().unwrap_or_default();
            let volumes = p.spec.as_ref().and_then(|s| s.volumes.as_ref());
            volumes
                .into_iter()
                .flatten()
                .filter_map(|v| v.persistent_volume_claim.as_ref())
                .map(move |c| (ns.clone(), c.claim_name.clone()))
        })
        .collect()
}

/// The names of the attachments that hold the node: those of a PersistentVolume not in
/// `ignored` (an attachment of an inline volume, without a PV name, never holds it).
pub fn pending(attachments: &[VolumeAttachment], ignored: &BTreeSet<String>) -> Vec<String> {
    attachments
        .iter()
        .filter(|a| {
            a.spec
                .source
                .persistent_volume_name
                .as_ref()
                .is_some_and(|pv| !ignored.contains(pv))
        })
        .map(|a| a.metadata.name.clone().unwrap_or_default())
        .collect()
}

/// The attachments that hold `node` (Karpenter's `filterVolumeAttachments`).
pub async fn pending_attachments<C: Cluster>(
    cluster: &C,
    node: &str,
    now: Timestamp,
) -> Result<Vec<String>, ClusterError> {
    let attachments = cluster.volume_attachments(node).await?;
    if attachments.is_empty() {
        return Ok(Vec::new());
    }
    let pods = cluster.pods_on_node(node).await?;
    let mut ignored = BTreeSet::new();
    for (ns, name) in undrainable_claims(&pods, now) {
        match cluster.persistent_volume_claim(&ns, &name).await {
            Ok(pvc) => ignored.extend(pvc.and_then(|c| c.spec?.volume_name)),
            Err(e) if e.is_not_found() => {}
            Err(e) => return Err(e),
        }
    }
    Ok(pending(&attachments, &ignored))
}

/// Where the wait for `node`'s volumes stands at `now`.
pub async fn check<C: Cluster>(
    cluster: &C,
    node: &str,
    deadline: Option<Timestamp>,
    now: Timestamp,
) -> Volumes {
    let overdue = deadline.is_some_and(|d| now >= d);
    match pending_attachments(cluster, node, now).await {
        Ok(names) if names.is_empty() => Volumes::Detached,
        Ok(names) if overdue => Volumes::Elapsed(names),
        Ok(names) => Volumes::Attached(names),
        // Past the deadline nothing is waited for, read or not.
        Err(_) if overdue => Volumes::Elapsed(Vec::new()),
        Err(e) => Volumes::Unreadable(e),
    }
}

pub use crate::teardown::volumes_settled as settled;

/// Whether the claim carries `cond` already (same status and reason).
fn recorded(c: &NodeClaim, cond: &Condition) -> bool {
    let status = c.status.as_ref();
    let found =
        status.and_then(|s| kerf_api::v1::common::find_condition(&s.conditions, &cond.type_));
    found.is_some_and(|d| d.status == cond.status && d.reason == cond.reason)
}

/// The volume step of a pass on a drained node: `Some(step)` while it must wait.
pub async fn await_detachment<C: Cluster, K: Cloud, P: Publisher>(
    ctx: &Ctx<C, K, P>,
    c: &NodeClaim,
    node: &str,
    deadline: Option<Timestamp>,
    now: Timestamp,
) -> Result<Option<Step>, ControlError> {
    if settled(c) {
        return Ok(None);
    }
    let volumes = check(&ctx.cluster, node, deadline, now).await;
    let fields = json!({"Node": obj(node), "NodeClaim": obj(claim::name(c))});
    match &volumes {
        Volumes::Unreadable(e) => ctx.log.warn(
            TERMINATION,
            "could not read volume attachments; retrying",
            json!({"Node": obj(node), "error": e.to_string()}),
        ),
        Volumes::Attached(names) => {
            let event = awaiting_event(node, names);
            crate::events::emit_all(ctx, vec![event]).await;
        }
        Volumes::Elapsed(names) if !names.is_empty() => ctx.log.info(
            TERMINATION,
            "termination grace period elapsed; not waiting for volume detachment",
            fields,
        ),
        _ => {}
    }
    if let Some(cond) = volumes.condition()
        && !recorded(c, &cond)
    {
        ctx.cluster
            .set_node_claim_conditions(claim::name(c), &[cond], now)
            .await?;
    }
    Ok(volumes.wait())
}

/// Karpenter's `AwaitingVolumeDetachment` Event on the Node.
fn awaiting_event(node: &str, names: &[String]) -> EventSpec {
    EventSpec {
        involved: InvolvedObject {
            api_version: "v1".into(),
            kind: "Node".into(),
            name: node.into(),
            namespace: String::new(),
            uid: String::new(),
        },
        type_: EventType::Normal,
        reason: EventReason::AwaitingVolumeDetachment,
        message: format!(
            "Awaiting deletion of bound volumeattachments ({})",
            names.join(", ")
        ),
    }
}

#[cfg(test)]
#[path = "volumes_tests.rs"]
mod tests;
