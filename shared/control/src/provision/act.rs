//! Acting on a plan: create NodeClaims, launch them (new ones and ones a crashed pass left
//! unlaunched), record the results; a launch without capacity caches its offerings as
//! unavailable and deletes its NodeClaim so the next pass plans around it.

use futures::StreamExt;
use futures::stream;
use kerf_api::v1::{ConditionStatus, NodeClaim};
use kerf_catalog::unavailable;
use kerf_engine::plan::{Launch, Plan, ReasonKind, Unschedulable};
use serde_json::json;

use super::ProvisionReport;
use super::notify::{self, Notes};
use crate::claim::{self, condition};
use crate::ctx::Ctx;
use crate::finalize;
use crate::launch::{self, RequestError};
use crate::log::{abbreviate, controllers::LIFECYCLE, controllers::PROVISIONER, obj};
use crate::metrics::names::{LAUNCH_FAILURES, NODECLAIMS_CREATED, NODECLAIMS_LAUNCHED};
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

/// What resuming found.
#[derive(Debug, Default)]
pub(super) struct Resumed {
    pub insufficient_capacity: bool,
}

fn unlaunched(c: &NodeClaim) -> bool {
    c.metadata.deletion_timestamp.is_none()
        && claim::provider_id(c).is_none()
        && !claim::is_true(c, LAUNCHED)
        && claim::pool_name(c).is_some()
}

/// Launches the NodeClaims an earlier pass created but did not launch, and puts the results
/// into the view so the plan counts their real capacity.
pub(super) async fn resume<C: Cluster, K: Cloud, P: Publisher>(
    ctx: &Ctx<C, K, P>,
    view: &mut View,
    report: &mut ProvisionReport,
) -> Resumed {
    let todo: Vec<NodeClaim> = view
        .snap
        .node_claims
        .iter()
        .filter(|c| unlaunched(c))
        .cloned()
        .collect();
    let mut out = Resumed::default();
    if todo.is_empty() {
        return out;
    }
    let view_ref: &View = view;
    let results: Vec<(String, LaunchOutcome)> = stream::iter(todo.iter().map(|c| async move {
        (
            claim::name(c).to_string(),
            launch_claim(ctx, view_ref, c).await,
        )
    }))
    .buffered(ctx.settings.concurrency.max(1))
    .collect()
    .await;
    for (name, outcome) in results {
        let pos = view
            .snap
            .node_claims
            .iter()
            .position(|c| claim::name(c) == name);
        match (outcome, pos) {
            (LaunchOutcome::Launched(updated), Some(i)) => {
                report.launched.push(name);
                view.snap.node_claims[i] = *updated;
            }
            (LaunchOutcome::NoCapacity, Some(i)) => {
                report.insufficient_capacity += 1;
                out.insufficient_capacity = true;
                view.snap.node_claims.remove(i);
            }
            (LaunchOutcome::Failed(e), _) => report.errors.push(format!("launching {name}: {e}")),
            _ => {}
        }
    }
    out
}

/// Creates and launches the plan's NodeClaims, then nominates and reports pods. Returns
/// whether a launch found no capacity.
pub(super) async fn apply<C: Cluster, K: Cloud, P: Publisher>(
    ctx: &Ctx<C, K, P>,
    view: &View,
    plan: &Plan,
    final_pass: bool,
    report: &mut ProvisionReport,
) -> bool {
    let n = ctx.settings.concurrency.max(1);
    let created: Vec<(&Launch, Result<NodeClaim, String>)> =
        stream::iter(plan.launches.iter().map(|l| async move {
            (
                l,
                create_claim(ctx, view, l, &Default::default(), "provisioning").await,
            )
        }))
        .buffered(n)
        .collect()
        .await;
    let mut notes = Notes::default();
    let mut claims = Vec::new();
    for (l, r) in created {
        match r {
            Ok(c) => {
                report.created.push(claim::name(&c).to_string());
                claims.push((l, c));
            }
            Err(e) => {
                report
                    .errors
                    .push(format!("creating a nodeclaim for {}: {e}", l.node_pool));
                notes
                    .unschedulable
                    .extend(l.pods.iter().map(|p| Unschedulable {
                        pod: p.clone(),
                        reason: format!("creating nodeclaim: {e}"),
                        kind: ReasonKind::LaunchFailed,
                    }));
            }
        }
    }
    let launched: Vec<(&Launch, &NodeClaim, LaunchOutcome)> = stream::iter(
        claims
            .iter()
            .map(|(l, c)| async move { (*l, c, launch_claim(ctx, view, c).await) }),
    )
    .buffered(n)
    .collect()
    .await;
    let mut ice = false;
    for (l, c, outcome) in launched {
        let name = claim::name(c).to_string();
        match outcome {
            LaunchOutcome::Launched(_) => {
                report.launched.push(name.clone());
                notes.nominated.extend(
                    l.pods
                        .iter()
                        .map(|p| (p.clone(), format!("nodeclaim/{name}"))),
                );
            }
            LaunchOutcome::NoCapacity => {
                report.insufficient_capacity += 1;
                ice = true;
                if final_pass {
                    let reason = format!(
                        "nodepool {:?}: no capacity for any offering of the claim; retrying on the next pass",
                        l.node_pool
                    );
                    notes
                        .unschedulable
                        .extend(l.pods.iter().map(|p| Unschedulable {
                            pod: p.clone(),
                            reason: reason.clone(),
                            kind: ReasonKind::CapacityUnavailable,
                        }));
                }
            }
            LaunchOutcome::Failed(e) => {
                report.errors.push(format!("launching {name}: {e}"));
                notes.nominated.extend(
                    l.pods
                        .iter()
                        .map(|p| (p.clone(), format!("nodeclaim/{name}"))),
                );
            }
        }
    }
    for nm in &plan.nominations {
        let target = if view
            .snap
            .nodes
            .iter()
            .any(|n| n.metadata.name.as_deref() == Some(&nm.node))
        {
            format!("node/{}", nm.node)
        } else {
            format!("nodeclaim/{}", nm.node)
        };
        notes.nominated.push((nm.pod.clone(), target));
    }
    if !ice || final_pass {
        notes
            .unschedulable
            .extend(plan.unschedulable.iter().cloned());
        report.unschedulable = notes.unschedulable.clone();
    }
    notify::send(ctx, view, notes).await;
    ice
}

/// Creates the NodeClaim of a planned launch (`labels` added to the pool's), logged and
/// counted under `reason` (`provisioning`, or the disruption reason of a replacement).
pub async fn create_claim<C: Cluster, K: Cloud, P: Publisher>(
    ctx: &Ctx<C, K, P>,
    view: &View,
    l: &Launch,
    labels: &std::collections::BTreeMap<String, String>,
    reason: &str,
) -> Result<NodeClaim, String> {
    let pool = view
        .pool(&l.node_pool)
        .ok_or_else(|| format!("nodepool {} is gone", l.node_pool))?;
    let class = view
        .classes
        .get(&pool.spec.template.spec.node_class_ref.name);
    let mut claim = claim::new_claim(pool, class.map(|c| c.as_ref()), l);
    if let Some(m) = claim.metadata.labels.as_mut() {
        m.extend(labels.clone());
    }
    let c = ctx
        .cluster
        .create_node_claim(pool, claim)
        .await
        .map_err(|e| e.to_string())?;
    ctx.metrics.count(
        NODECLAIMS_CREATED,
        &[("nodepool", &l.node_pool), ("reason", reason)],
        1.0,
    );
    ctx.log.info(
        PROVISIONER,
        "created nodeclaim",
        json!({"NodePool": obj(&l.node_pool), "NodeClaim": obj(claim::name(&c)),
               "requests": l.requests, "instance-types": abbreviate(&l.instance_type_options, 5)}),
    );
    Ok(c)
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
        return give_up(ctx, c, "NodeClassNotReady", &e).await;
    };
    let req = match launch::request(c, class.clone(), catalog, ctx.settings.max_instance_types) {
        Ok(r) => r,
        Err(e @ (RequestError::NoInstanceType | RequestError::NoOffering)) => {
            return no_capacity(ctx, c, &[], &e.to_string()).await;
        }
        Err(e) => return give_up(ctx, c, "LaunchFailed", &e.to_string()).await,
    };
    match ctx.cloud.launch(&req).await {
        Ok(l) => {
            if !l.unavailable.is_empty() {
                record_unavailable(ctx, &l.unavailable).await;
            }
            launched(ctx, c, &l, catalog).await
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
            give_up(ctx, c, e.reason(), &e.to_string()).await
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
) -> LaunchOutcome {
    let name = claim::name(c).to_string();
    // Labels first: a crash between the two writes leaves the claim unlaunched in status,
    // so the next pass re-finds the same instance and writes the status.
    let labels = launch::launched_labels(l, catalog);
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
    notify::publish(ctx, &[ev]).await;
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
    notify::claim_event(
        ctx,
        c,
        "InsufficientCapacityError",
        &format!("NodeClaim {name} event: {msg}"),
    )
    .await;
    publish_failure(ctx, c, &msg).await;
    match finalize::delete_claim(ctx, c, None, "insufficient_capacity").await {
        Ok(()) => LaunchOutcome::NoCapacity,
        Err(e) => LaunchOutcome::Failed(format!("deleting after insufficient capacity: {e}")),
    }
}

/// A launch that can never succeed as asked: delete the NodeClaim (Karpenter does the same
/// for a node class that is not ready) so the next pass plans afresh.
async fn give_up<C: Cluster, K: Cloud, P: Publisher>(
    ctx: &Ctx<C, K, P>,
    c: &NodeClaim,
    reason: &str,
    msg: &str,
) -> LaunchOutcome {
    let name = claim::name(c).to_string();
    ctx.log.error(
        LIFECYCLE,
        "failed launching nodeclaim",
        json!({"NodeClaim": obj(&name), "reason": reason, "error": msg}),
    );
    publish_failure(ctx, c, msg).await;
    match finalize::delete_claim(ctx, c, None, "launch_failed").await {
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
    notify::publish(ctx, &[ev]).await;
}
