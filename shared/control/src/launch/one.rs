//! Launching one NodeClaim and recording the result on it: the instance's labels, then its
//! status (`Launched=True`). A launch without capacity caches its offerings as unavailable and
//! deletes its NodeClaim so the next pass plans around it; one that can never succeed as
//! asked deletes it too; an instance whose recording failed is found again by the next pass
//! through the launch's idempotency key.

use kerf_api::v1::{ConditionStatus, NodeClaim};
use kerf_catalog::unavailable;
use serde_json::json;

use crate::claim::{self, condition};
use crate::ctx::Ctx;
use crate::finalize;
use crate::launch::{self, RequestError};
use crate::log::{controllers::LIFECYCLE, obj};
use crate::metrics::names::{LAUNCH_FAILURES, NODECLAIMS_LAUNCHED};
use crate::names::conditions::LAUNCHED;
use crate::ports::publish::detail_types;
use crate::ports::{Cloud, CloudError, Cluster, DecisionEvent, Publisher};
use crate::view::View;

/// How one launch ended.
#[derive(Debug, Clone, PartialEq)]
pub enum LaunchOutcome {
    /// The instance exists; the NodeClaim as written afterwards.
    Launched(Box<NodeClaim>),
    /// No offering had capacity: cached unavailable, NodeClaim deleted.
    NoCapacity,
    /// Any other failure (recorded on the NodeClaim; a later pass retries or times it out).
    Failed(String),
}

/// Launches one NodeClaim and records the result on it.
pub async fn launch_claim<C: Cluster, K: Cloud, P: Publisher>(
    ctx: &Ctx<C, K, P>,
    view: &View,
    c: &NodeClaim,
) -> LaunchOutcome {
    let name = claim::name(c).to_string();
    let class_name = c.spec.node_class_ref.name.clone();
    let (Some(class), Some(catalog)) = (
        view.classes.get(&class_name),
        view.catalogs.get(&class_name),
    ) else {
        let e = format!("EC2NodeClass {class_name:?} not found or not ready");
        return give_up(ctx, c, GiveUp::NodeClassNotReady, &e).await;
    };
    let overlaid;
    let catalog = if ctx.settings.node_overlay {
        overlaid = crate::overlays::launch_catalog(view, c, catalog);
        &overlaid
    } else {
        catalog
    };
    let req = match launch::request(c, class.clone(), catalog, ctx.settings.max_instance_types) {
        Ok(r) => r,
        Err(e @ (RequestError::NoInstanceType | RequestError::NoOffering)) => {
            return no_capacity(ctx, c, &[], &e.to_string()).await;
        }
        Err(e) => return give_up(ctx, c, GiveUp::LaunchFailed, &e.to_string()).await,
    };
    match ctx.cloud.launch(&req).await {
        Ok(l) => {
            if !l.unavailable.is_empty() {
                record_unavailable(ctx, &l.unavailable).await;
            }
            launched(ctx, c, &l, catalog, &req.labels).await
        }
        Err(CloudError::NoCapacity(keys)) => {
            no_capacity(
                ctx,
                c,
                &keys,
                "all requested instance types were unavailable",
            )
            .await
        }
        Err(e @ CloudError::NodeClassNotReady(_)) => {
            give_up(ctx, c, GiveUp::NodeClassNotReady, &e.to_string()).await
        }
        Err(e) => {
            ctx.log.error(
                LIFECYCLE,
                "failed launching nodeclaim",
                json!({"NodeClaim": obj(&name), "error": e.to_string()}),
            );
            let cond = condition(
                LAUNCHED,
                ConditionStatus::Unknown,
                e.reason(),
                &e.to_string(),
            );
            if let Err(w) = ctx
                .cluster
                .set_node_claim_conditions(&name, &[cond], ctx.now())
                .await
            {
                ctx.log.warn(
                    LIFECYCLE,
                    "could not record the launch failure",
                    json!({"NodeClaim": obj(&name), "error": w.to_string()}),
                );
            }
            publish_failure(ctx, c, &e.to_string()).await;
            LaunchOutcome::Failed(e.to_string())
        }
    }
}

async fn launched<C: Cluster, K: Cloud, P: Publisher>(
    ctx: &Ctx<C, K, P>,
    c: &NodeClaim,
    l: &crate::ports::Launched,
    catalog: &kerf_catalog::Catalog,
    asked: &std::collections::BTreeMap<String, String>,
) -> LaunchOutcome {
    let name = claim::name(c).to_string();
    // Labels first: a crash between the two writes leaves the claim unlaunched in status,
    // so the next pass re-finds the same instance and writes the status.
    let labels = launch::launched_labels(l, catalog, asked);
    if let Err(e) = ctx.cluster.label_node_claim(&name, &labels).await {
        return not_recorded(
            ctx,
            &name,
            l,
            format!("labelling the launched nodeclaim: {e}"),
        );
    }
    let status = launch::launched_status(c, l, catalog, ctx.now());
    let written = match ctx
        .cluster
        .patch_node_claim_status(&name, None, &status)
        .await
    {
        Ok(w) => w,
        Err(e) => return not_recorded(ctx, &name, l, format!("recording the launch: {e}")),
    };
    let pool = claim::pool_name(c).unwrap_or_default().to_string();
    ctx.metrics
        .count(NODECLAIMS_LAUNCHED, &[("nodepool", &pool)], 1.0);
    ctx.log.info(
        LIFECYCLE,
        "launched nodeclaim",
        json!({"NodeClaim": obj(&name), "provider-id": l.provider_id, "instance-type": l.instance_type,
               "zone": l.zone, "capacity-type": l.capacity_type.as_str(), "allocatable": status.allocatable}),
    );
    let ev = DecisionEvent {
        detail_type: detail_types::NODECLAIM_LAUNCHED.into(),
        detail: json!({"nodeClaim": name, "nodePool": pool, "providerID": l.provider_id,
            "instanceType": l.instance_type, "zone": l.zone, "capacityType": l.capacity_type.as_str()}),
        resources: vec![l.provider_id.clone()],
    };
    crate::events::publish(ctx, &[ev]).await;
    LaunchOutcome::Launched(Box::new(written))
}

/// An instance exists but the claim does not say so yet: logged, and left to the next pass,
/// which finds the same instance through the launch's idempotency key.
fn not_recorded<C: Cluster, K: Cloud, P: Publisher>(
    ctx: &Ctx<C, K, P>,
    name: &str,
    l: &crate::ports::Launched,
    e: String,
) -> LaunchOutcome {
    ctx.log.warn(
        LIFECYCLE,
        "could not record the launch",
        json!({"NodeClaim": obj(name), "provider-id": l.provider_id, "error": e}),
    );
    LaunchOutcome::Failed(e)
}

async fn record_unavailable<C: Cluster, K: Cloud, P: Publisher>(
    ctx: &Ctx<C, K, P>,
    keys: &[unavailable::OfferingKey],
) {
    let now = ctx.now();
    for k in keys {
        ctx.metrics.count(
            LAUNCH_FAILURES,
            &[
                ("zone", &k.zone),
                ("capacity_type", k.capacity_type.as_str()),
                ("reason", "InsufficientInstanceCapacity"),
            ],
            1.0,
        );
    }
    if let Err(e) = ctx
        .cluster
        .record_unavailable(&unavailable::marks(keys, now), now)
        .await
    {
        ctx.log.warn(
            LIFECYCLE,
            "could not record unavailable offerings",
            json!({"error": e.to_string()}),
        );
    }
}

async fn no_capacity<C: Cluster, K: Cloud, P: Publisher>(
    ctx: &Ctx<C, K, P>,
    c: &NodeClaim,
    keys: &[unavailable::OfferingKey],
    why: &str,
) -> LaunchOutcome {
    if !keys.is_empty() {
        record_unavailable(ctx, keys).await;
    }
    let name = claim::name(c).to_string();
    let msg = format!("creating instance, insufficient capacity, {why}");
    ctx.log.error(
        LIFECYCLE,
        "failed launching nodeclaim",
        json!({"NodeClaim": obj(&name), "error": msg}),
    );
    crate::events::claim_event(
        ctx,
        c,
        crate::ports::EventReason::InsufficientCapacityError,
        &format!("NodeClaim {name} event: {msg}"),
    )
    .await;
    publish_failure(ctx, c, &msg).await;
    match finalize::delete_claim(ctx, c, None, finalize::Deletion::InsufficientCapacity).await {
        Ok(()) => LaunchOutcome::NoCapacity,
        Err(e) => LaunchOutcome::Failed(format!("deleting after insufficient capacity: {e}")),
    }
}

/// Why a launch can never succeed as asked, spelt as the cloud's error reasons.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum GiveUp {
    NodeClassNotReady,
    LaunchFailed,
}

impl GiveUp {
    fn as_str(self) -> &'static str {
        match self {
            GiveUp::NodeClassNotReady => "NodeClassNotReady",
            GiveUp::LaunchFailed => "LaunchFailed",
        }
    }
}

/// A launch that can never succeed as asked: delete the NodeClaim (Karpenter does the same
/// for a node class that is not ready) so the next pass plans afresh.
async fn give_up<C: Cluster, K: Cloud, P: Publisher>(
    ctx: &Ctx<C, K, P>,
    c: &NodeClaim,
    why: GiveUp,
    msg: &str,
) -> LaunchOutcome {
    let name = claim::name(c).to_string();
    ctx.log.error(
        LIFECYCLE,
        "failed launching nodeclaim",
        json!({"NodeClaim": obj(&name), "reason": why.as_str(), "error": msg}),
    );
    publish_failure(ctx, c, msg).await;
    match finalize::delete_claim(ctx, c, None, finalize::Deletion::LaunchFailed).await {
        Ok(()) => LaunchOutcome::Failed(msg.to_string()),
        Err(e) => LaunchOutcome::Failed(format!("{msg}; deleting: {e}")),
    }
}

async fn publish_failure<C: Cluster, K: Cloud, P: Publisher>(
    ctx: &Ctx<C, K, P>,
    c: &NodeClaim,
    msg: &str,
) {
    let ev = DecisionEvent {
        detail_type: detail_types::NODECLAIM_LAUNCH_FAILED.into(),
        detail: json!({"nodeClaim": claim::name(c), "nodePool": claim::pool_name(c), "error": msg}),
        resources: vec![],
    };
    crate::events::publish(ctx, &[ev]).await;
}
