//! The `Consolidatable` condition on NodeClaims, kept as Karpenter's NodeClaim consolidation
//! controller keeps it: true once an initialized NodeClaim's NodePool `consolidateAfter` has
//! passed since its last pod event, removed while it has not (or when consolidation is off),
//! so that `kubectl get nodeclaims -o yaml` shows what a Karpenter user expects. Decided by
//! the engine ([`kerf_engine::consolidatable`]); the disruption timers wake a sweep at the
//! moment it turns true.

use std::collections::BTreeSet;

use kerf_api::v1::ConditionStatus;
use serde_json::json;

use crate::claim::{self, condition};
use crate::ctx::Ctx;
use crate::error::ControlError;
use crate::log::{controllers::DISRUPTION, obj};
use crate::ports::{Cloud, Cluster, ClusterError, Publisher};
use crate::view::View;
use kerf_labels::conditions::CONSOLIDATABLE;

/// Sets or removes the condition where it differs from the engine's word; how many changed.
pub async fn mark<C: Cluster, K: Cloud, P: Publisher>(
    ctx: &Ctx<C, K, P>,
    view: &View,
    snapshot: &kerf_engine::Snapshot,
) -> Result<usize, ControlError> {
    let now_true: BTreeSet<String> = kerf_engine::consolidatable(snapshot).into_iter().collect();
    let mut n = 0;
    for c in view.live_claims() {
        let name = claim::name(c);
        let has = c
            .status
            .as_ref()
            .is_some_and(|s| s.conditions.iter().any(|k| k.type_ == CONSOLIDATABLE));
        if now_true.contains(name) && !claim::is_true(c, CONSOLIDATABLE) {
            let cond = condition(CONSOLIDATABLE, ConditionStatus::True, CONSOLIDATABLE, "");
            ctx.cluster
                .set_node_claim_conditions(name, &[cond], ctx.now())
                .await?;
            ctx.log.debug(
                DISRUPTION,
                "marking consolidatable",
                json!({"NodeClaim": obj(name)}),
            );
            n += 1;
        } else if !now_true.contains(name) && has && clear(ctx, c).await? {
            n += 1;
        }
    }
    Ok(n)
}

/// Removes the condition, conditional on the claim being unchanged since it was read (a
/// conflict leaves it to the next sweep); whether it was removed.
async fn clear<C: Cluster, K: Cloud, P: Publisher>(
    ctx: &Ctx<C, K, P>,
    c: &kerf_api::v1::NodeClaim,
) -> Result<bool, ControlError> {
    let Some(mut status) = c.status.clone() else {
        return Ok(false);
    };
    status.conditions.retain(|k| k.type_ != CONSOLIDATABLE);
    let rv = c.metadata.resource_version.as_deref();
    match ctx
        .cluster
        .patch_node_claim_status(claim::name(c), rv, &status)
        .await
    {
        Ok(_) => {
            ctx.log.debug(
                DISRUPTION,
                "removing consolidatable status condition",
                json!({"NodeClaim": obj(claim::name(c))}),
            );
            Ok(true)
        }
        Err(ClusterError::Conflict(_) | ClusterError::NotFound(_)) => Ok(false),
        Err(e) => Err(e.into()),
    }
}
