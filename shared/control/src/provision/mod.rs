//! The provisioner: plan capacity for provisionable pods and make it exist.
//!
//! One pass (under the decision Lease, see [`crate::lease`]):
//! 1. read a [`View`] (snapshot, unavailable offerings, catalogs);
//! 2. resume NodeClaims an earlier pass created but did not launch (a crash, a transient
//!    error), so in-flight capacity is real before planning;
//! 3. run the engine; in-flight NodeClaims count as capacity, so a repeated trigger never
//!    launches twice;
//! 4. for each planned launch create the NodeClaim first, then launch it with the NodeClaim's
//!    UID as idempotency key, then record provider ID, capacity and `Launched=True`;
//! 5. nominate pods and report the unschedulable ones (Events, decision events);
//! 6. plan again in the same invocation, as Karpenter re-solves at once, while the pass made
//!    progress that may place more: a launch found no capacity (its offerings are now cached
//!    unavailable and its NodeClaim is gone, so the next plan excludes them), or launches
//!    recorded their real capacity while pods were left over (a NodePool's limits charge a
//!    launch at its largest option, so room may remain). At most [`MAX_PASSES`] passes.

pub mod act;
pub mod batch;
pub(crate) mod notify;

use std::time::Instant;

use kerf_engine::Options;
use kerf_engine::plan::{Plan, ReasonKind};
use serde_json::json;

use crate::ctx::Ctx;
use crate::error::ControlError;
use crate::log::{abbreviate, controllers::PROVISIONER};
use crate::metrics::names::{PODS_UNSCHEDULABLE, SCHEDULING_DURATION};
use crate::ports::{Cloud, Cluster, Publisher};
use crate::view::View;

pub use crate::launch::ProvisionReport;

/// Passes one invocation runs at most (each excludes what the one before found unavailable:
/// a launch tries up to 60 instance types, so spot gone everywhere takes a few passes to
/// fall back to on-demand; the bound keeps an invocation well inside its timeout).
pub const MAX_PASSES: usize = 25;

/// Provisions, assuming the caller holds the decision Lease.
pub async fn provision<C: Cluster, K: Cloud, P: Publisher>(
    ctx: &Ctx<C, K, P>,
) -> Result<ProvisionReport, ControlError> {
    let mut report = ProvisionReport::default();
    loop {
        report.passes += 1;
        let mut view = View::read(ctx).await?;
        let resumed = act::resume(ctx, &mut view, &mut report).await;
        let static_ice = crate::statics::scale_up(ctx, &view, &mut report).await;
        report.insufficient_capacity += static_ice;
        let plan = schedule(ctx, &view, &mut report);
        let final_pass = report.passes >= MAX_PASSES;
        let launched_before = report.launched.len();
        let ice = act::apply(ctx, &view, &plan, final_pass, &mut report).await;
        let launched = report.launched.len() > launched_before;
        let left_over = report
            .unschedulable
            .iter()
            .any(|u| u.kind == ReasonKind::NoNodePoolFits);
        let again =
            resumed.insufficient_capacity || static_ice > 0 || ice || (launched && left_over);
        if !again || final_pass {
            return Ok(report);
        }
    }
}

/// Runs the engine on the view and logs what it found.
fn schedule<C: Cluster, K: Cloud, P: Publisher>(
    ctx: &Ctx<C, K, P>,
    view: &View,
    report: &mut ProvisionReport,
) -> Plan {
    let conv = view.convert(ctx);
    let started = Instant::now();
    let opts = Options {
        max_instance_types: ctx.settings.max_instance_types,
        optimize_cost: ctx.settings.optimize_cost,
        min_values_policy: ctx.settings.min_values_policy,
        ..Options::default()
    };
    let mut plan = kerf_engine::provision(&conv.snapshot, &opts);
    let took = started.elapsed();
    plan.unschedulable.extend(conv.invalid);
    report.pending =
        plan.summary.pending_pods + plan.unschedulable.len() - plan.summary.unschedulable_pods;
    report.nominated = plan.nominations.len();
    report.unschedulable = plan.unschedulable.clone();
    ctx.metrics.observe(
        SCHEDULING_DURATION,
        &[("controller", PROVISIONER)],
        took.as_secs_f64(),
    );
    ctx.metrics
        .count(PODS_UNSCHEDULABLE, &[], plan.unschedulable.len() as f64);
    if report.pending == 0 {
        return plan;
    }
    let pods: Vec<String> = plan
        .launches
        .iter()
        .flat_map(|l| l.pods.iter().cloned())
        .chain(plan.nominations.iter().map(|n| n.pod.clone()))
        .chain(plan.unschedulable.iter().map(|u| u.pod.clone()))
        .collect();
    ctx.log.info(
        PROVISIONER,
        "found provisionable pod(s)",
        json!({"Pods": abbreviate(&pods, 5), "duration": format!("{took:?}")}),
    );
    if !plan.launches.is_empty() {
        let placed: usize = plan.launches.iter().map(|l| l.pods.len()).sum();
        ctx.log.info(
            PROVISIONER,
            "computed new nodeclaim(s) to fit pod(s)",
            json!({"nodeclaims": plan.launches.len(), "pods": placed}),
        );
    }
    plan
}
