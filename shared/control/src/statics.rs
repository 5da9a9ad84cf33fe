//! Static NodePools (`spec.replicas`, Karpenter's `StaticCapacity` gate), from the engine's
//! [`kerf_engine::statics`] plan: the provisioner's pass creates and launches the NodeClaims
//! a pool is short of ([`scale_up`], Karpenter's `provisioning.static`), and the disruption
//! pass deletes the surplus ([`scale_down`], `deprovisioning.static`), each deletion drained
//! by the termination function as any other.

use std::collections::BTreeMap;

use kerf_engine::Options;
use kerf_engine::statics::{StaticPlan, plan};
use serde_json::json;

use crate::ctx::Ctx;
use crate::error::ControlError;
use crate::launch::ProvisionReport;
use crate::launch::{Creation, LaunchOutcome, create_claim, launch_claim};
use crate::log::controllers::{STATIC_DEPROVISIONING, STATIC_PROVISIONING};
use crate::log::obj;
use crate::ports::{Cloud, Cluster, Publisher, Queue};
use crate::retire::{Retirement, delete_one};
use crate::view::View;

/// The plan, or `None` without the gate or without a static pool (no conversion is spent on
/// the passes of clusters that have none).
fn static_plan<C: Cluster, K: Cloud, P: Publisher>(
    ctx: &Ctx<C, K, P>,
    view: &View,
) -> Option<StaticPlan> {
    let any = view
        .snap
        .node_pools
        .iter()
        .any(|p| p.spec.replicas.is_some());
    if !ctx.settings.static_capacity || !any {
        return None;
    }
    let conv = view.convert(ctx);
    let opts = Options {
        max_instance_types: ctx.settings.max_instance_types,
        min_values_policy: ctx.settings.min_values_policy,
        ..Options::default()
    };
    Some(plan(&conv.snapshot, &opts))
}

/// Creates and launches the NodeClaims static pools are short of; returns how many
/// launches found no capacity (their offerings are now cached unavailable).
pub async fn scale_up<C: Cluster, K: Cloud, P: Publisher>(
    ctx: &Ctx<C, K, P>,
    view: &View,
    report: &mut ProvisionReport,
) -> usize {
    let Some(p) = static_plan(ctx, view) else {
        return 0;
    };
    for a in &p.at_limit {
        ctx.log.info(
            STATIC_PROVISIONING,
            "nodepool node limit reached",
            json!({"NodePool": obj(&a.node_pool), "replicas": a.replicas, "nodes": a.nodes}),
        );
    }
    for (pool, e) in &p.errors {
        report.errors.push(format!("static nodepool {pool}: {e}"));
    }
    let mut no_capacity = 0;
    for l in &p.launches {
        let claim = match create_claim(ctx, view, l, &BTreeMap::new(), Creation::Static).await {
            Ok(c) => c,
            Err(e) => {
                report
                    .errors
                    .push(format!("creating {}: {e}", l.node_claim));
                continue;
            }
        };
        let name = crate::claim::name(&claim).to_string();
        report.created.push(name.clone());
        match launch_claim(ctx, view, &claim).await {
            LaunchOutcome::Launched(_) => report.launched.push(name),
            LaunchOutcome::NoCapacity => no_capacity += 1,
            LaunchOutcome::Failed(e) => report.errors.push(format!("launching {name}: {e}")),
        }
    }
    no_capacity
}

/// Deletes the NodeClaims static pools have beyond their replicas; returns their names.
pub async fn scale_down<C: Cluster, K: Cloud, P: Publisher, Q: Queue>(
    ctx: &Ctx<C, K, P>,
    termination: &Q,
    view: &View,
) -> Result<Vec<String>, ControlError> {
    let Some(p) = static_plan(ctx, view) else {
        return Ok(Vec::new());
    };
    let mut deleted = Vec::new();
    for r in &p.removals {
        ctx.log.info(
            STATIC_DEPROVISIONING,
            "deprovisioning nodeclaim to satisfy replica count",
            json!({"NodePool": obj(&r.node_pool), "NodeClaim": obj(&r.node_claim)}),
        );
        delete_one(
            ctx,
            termination,
            &r.node_claim,
            &r.node_pool,
            Retirement::Overprovisioned,
        )
        .await?;
        deleted.push(r.node_claim.clone());
    }
    Ok(deleted)
}
