//! The decision Lease: provisioning and disruption decisions serialize on one
//! `coordination.k8s.io/v1` Lease, so two decisions never act on each other's stale view.
//! A caller that finds it held exits cleanly; one that dies leaves it to expire.

use std::future::Future;
use std::time::Duration;

use serde_json::json;

use crate::ctx::Ctx;
use crate::error::ControlError;
use crate::ports::{Cloud, Cluster, LeaseOutcome, LeaseRequest, Publisher};

/// The Lease name.
pub const LEASE_NAME: &str = "kerf-decisions";

fn request<C: Cluster, K: Cloud, P: Publisher>(ctx: &Ctx<C, K, P>, holder: &str) -> LeaseRequest {
    let secs = ctx.settings.lease_duration.as_secs().max(1) as u64;
    LeaseRequest {
        namespace: ctx.settings.namespace.clone(),
        name: LEASE_NAME.into(),
        holder: holder.into(),
        duration: Duration::from_secs(secs),
        now: ctx.now(),
    }
}

/// The decision Lease was held by someone else.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("decision lease held by {holder}")]
pub struct LeaseHeld {
    /// Who holds it.
    pub holder: String,
}

/// Runs `f` while holding the decision Lease as `holder`; `Ok(Err(held))` names the holder
/// when someone else has it. The Lease is released afterwards, whatever `f` returned.
pub async fn with_lease<C, K, P, T, F, Fut>(
    ctx: &Ctx<C, K, P>,
    holder: &str,
    f: F,
) -> Result<Result<T, LeaseHeld>, ControlError>
where
    C: Cluster,
    K: Cloud,
    P: Publisher,
    F: FnOnce() -> Fut,
    Fut: Future<Output = Result<T, ControlError>>,
{
    let outcome = match ctx.cluster.acquire_lease(&request(ctx, holder)).await {
        // Two callers raced to create or renew it: the other one won.
        Err(e) if e.is_conflict() => LeaseOutcome::HeldByOther {
            holder: "a concurrent caller".into(),
            expires: ctx.now(),
        },
        other => other?,
    };
    match outcome {
        LeaseOutcome::HeldByOther { holder: other, .. } => {
            ctx.log.debug(
                crate::log::controllers::PROVISIONER,
                "decision lease held elsewhere; leaving this pass to it",
                json!({"holder": other}),
            );
            return Ok(Err(LeaseHeld { holder: other }));
        }
        LeaseOutcome::Held { .. } => {}
    }
    let out = f().await;
    if let Err(e) = ctx.cluster.release_lease(&request(ctx, holder)).await {
        ctx.log.warn(
            crate::log::controllers::PROVISIONER,
            "could not release the decision lease",
            json!({"error": e.to_string()}),
        );
    }
    out.map(Ok)
}
