//! The disruption function's pass (on a timer message, and every minute as a safety net,
//! under the decision Lease):
//!
//! 1. refresh EC2NodeClass status (what drift compares against);
//! 2. stamp Kerf's drift hashes on NodeClaims carrying another hash version (claims
//!    launched by Karpenter start from their current state, never drifted by a version
//!    change);
//! 3. advance commands under way, remove stale taints, queue terminations ([`progress`]);
//!    repair nodes unhealthy for too long (gate `NodeRepair`, [`crate::repair`]);
//! 4. validate a recorded command that is due and start or abandon it ([`decide`]);
//! 5. plan with the engine; mark drifted NodeClaims `Drifted`;
//! 6. expiry and drift start at once; emptiness and consolidation are recorded on their
//!    candidates ([`record`]) with a timer for their validation 15 s later;
//! 7. arm timers for the moments nodes become due ([`timers`]);
//! 8. tell: `DisruptionBlocked` / `Unconsolidatable` Events with the engine's reasons, the
//!    allowed disruptions per NodePool and reason.

pub mod consolidatable;
pub mod cost;
pub mod decide;
pub mod execute;
pub mod progress;
pub mod record;
pub mod timers;

pub use timers::{requeue, set_timer};

use std::collections::BTreeMap;

use kerf_api::v1::ConditionStatus;
use kerf_engine::DisruptOptions;
use kerf_engine::plan::Plan;
use serde_json::json;

use crate::claim::{self, condition};
use crate::ctx::Ctx;
use crate::error::ControlError;
use crate::log::{controllers::DISRUPTION, obj};
use crate::metrics::names::ALLOWED_DISRUPTIONS;
use crate::ports::{
    Cloud, Cluster, EventReason, EventSpec, EventType, InvolvedObject, Publisher, Queue, TimerKind,
};
use crate::view::View;
use progress::Progress;

/// What a sweep did.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct SweepReport {
    pub progress: Progress,
    /// Commands recorded for validation.
    pub recorded: Vec<String>,
    /// Commands that failed their validation.
    pub rejected: Vec<String>,
    /// Commands started.
    pub started: Vec<String>,
    /// Timers armed for moments nodes become due.
    pub armed: usize,
    pub drifted: Vec<String>,
    /// NodeClaims whose `Consolidatable` condition was set or removed.
    pub consolidatable: usize,
    pub skipped: usize,
    /// Node repair (with the `NodeRepair` gate).
    pub repair: crate::repair::Report,
    /// NodeClaims of static pools deleted beyond their replicas (`StaticCapacity` gate).
    pub overprovisioned: Vec<String>,
    /// NodeClaims deleted because their capacity block ends (`ReservedCapacity` gate).
    pub expired: Vec<String>,
    /// NodeClaims relabelled `on-demand` because their reservation ended.
    pub demoted: Vec<String>,
}

/// Options of the disruption function.
#[derive(Debug, Clone, Default)]
pub struct SweepOptions {
    /// Karpenter's `SpotToSpotConsolidation` feature gate.
    pub spot_to_spot: bool,
}

/// Where a pass sends work: the termination queue, and its own timers.
#[derive(Debug, Clone, Copy)]
pub struct Queues<'a, Q> {
    pub termination: &'a Q,
    pub timers: &'a Q,
}

/// How soon a pass looks again at commands waiting for their replacements.
pub const REPLACEMENT_CHECK: jiff::SignedDuration = jiff::SignedDuration::from_secs(5);

/// Validations one pass runs at most (each followed by a fresh read).
const MAX_VALIDATIONS: usize = 4;

/// One sweep (the caller holds the decision Lease).
pub async fn sweep<C: Cluster, K: Cloud, P: Publisher, Q: Queue>(
    ctx: &Ctx<C, K, P>,
    queues: &Queues<'_, Q>,
    opts: &SweepOptions,
) -> Result<SweepReport, ControlError> {
    let mut report = SweepReport::default();
    let termination = queues.termination;
    let first = View::read_with(ctx, true).await?;
    let changed = crate::nodeclass::refresh(ctx, &first.snap.node_classes).await;
    let restamped = restamp(ctx, &first).await?;
    let view = if changed + restamped > 0 {
        View::read_with(ctx, true).await?
    } else {
        first
    };
    let snap = &view.snap;
    let costs = cost::by_pool(&view);
    crate::nodepool::refresh(
        ctx,
        &snap.node_pools,
        &snap.node_claims,
        &snap.node_classes,
        &costs,
    )
    .await;
    progress::advance(ctx, termination, &view, &mut report.progress).await?;
    progress::untaint_stale(ctx, &view, &mut report.progress).await?;
    progress::queue_terminations(ctx, termination, &view, &mut report.progress).await?;
    if ctx.settings.node_repair {
        report.repair = crate::repair::run(ctx, termination, queues.timers, &view).await?;
    }
    report.overprovisioned = crate::statics::scale_down(ctx, termination, &view).await?;
    if ctx.settings.reserved_capacity {
        report.expired = crate::reservations::expire(ctx, termination, &view).await?;
    }
    let instances = crate::instances::Instances::read(ctx).await;
    if let Some(found) = &instances {
        let (claims, nodes) = (&snap.node_claims, &snap.nodes);
        report.demoted =
            crate::reservations::capacity_type::demote(ctx, claims, nodes, found).await?;
    }
    if !report.progress.waiting.is_empty() {
        // Karpenter's queue checks its commands' replacements every second; a timer a few
        // seconds out deletes the candidates soon after the replacements initialize.
        let at = ctx.now() + REPLACEMENT_CHECK;
        let waiting = &report.progress.waiting;
        if set_timer(ctx, queues.timers, TimerKind::Requeue, at, waiting).await {
            let a = BTreeMap::from([(progress::CHECK_AT.to_string(), claim::rfc3339(at))]);
            for c in waiting {
                ctx.cluster.annotate_node_claim(c, &a).await?;
            }
        }
    }
    let o = options(ctx, opts);
    let mut view = view;
    for _ in 0..MAX_VALIDATIONS {
        if !decide::validate_due(ctx, queues, &view, &o, &mut report).await? {
            break;
        }
        view = View::read_with(ctx, true).await?;
    }
    let mut conv = view.convert(ctx);
    if let Some(found) = &instances {
        found.describe_claims(&mut conv.snapshot, ctx.settings.reserved_capacity);
    }
    if ctx.settings.node_overlay {
        let pools = &conv.snapshot.node_pools;
        crate::overlays::refresh(ctx, &view.snap.node_overlays, pools).await;
    }
    let plan = kerf_engine::disrupt(&conv.snapshot, &o);
    mark_drifted(ctx, &view, &plan, &mut report).await?;
    report.consolidatable = consolidatable::mark(ctx, &view, &conv.snapshot).await?;
    decide::decide(ctx, queues, &view, &plan, &mut report).await?;
    report.armed = timers::arm_due(ctx, queues.timers, &view, &conv.snapshot).await?;
    tell(ctx, &view, &plan).await;
    cost::record(ctx, &view);
    report.skipped = plan.skipped.len();
    Ok(report)
}

/// The engine's options for this function.
fn options<C: Cluster, K: Cloud, P: Publisher>(
    ctx: &Ctx<C, K, P>,
    opts: &SweepOptions,
) -> DisruptOptions {
    DisruptOptions {
        spot_to_spot: opts.spot_to_spot,
        max_instance_types: ctx.settings.max_instance_types,
        optimize_cost: ctx.settings.optimize_cost,
        karpenter_search: ctx.settings.karpenter_search,
        min_values_policy: ctx.settings.min_values_policy,
        ..DisruptOptions::default()
    }
}

/// Stamps Kerf's hashes on claims that carry another hash version.
async fn restamp<C: Cluster, K: Cloud, P: Publisher>(
    ctx: &Ctx<C, K, P>,
    view: &View,
) -> Result<usize, ControlError> {
    let mut n = 0;
    for c in view.live_claims() {
        let a = c.metadata.annotations.clone().unwrap_or_default();
        let mut stamp = BTreeMap::new();
        if a.get(kerf_labels::NODEPOOL_HASH_VERSION)
            .map(String::as_str)
            != Some(kerf_labels::KERF_NODEPOOL_HASH_VERSION)
            && let Some(pool) = claim::pool_name(c).and_then(|p| view.pool(p))
        {
            stamp.insert(
                kerf_labels::NODEPOOL_HASH.to_string(),
                kerf_convert::hash::nodepool_hash(pool),
            );
            stamp.insert(
                kerf_labels::NODEPOOL_HASH_VERSION.to_string(),
                kerf_labels::KERF_NODEPOOL_HASH_VERSION.to_string(),
            );
        }
        let class_version = a
            .get(kerf_labels::aws::EC2NODECLASS_HASH_VERSION)
            .map(String::as_str);
        if class_version != Some(kerf_labels::aws::KERF_EC2NODECLASS_HASH_VERSION)
            && let Some(class) = view.classes.get(&c.spec.node_class_ref.name)
        {
            stamp.insert(
                kerf_labels::aws::EC2NODECLASS_HASH.to_string(),
                kerf_convert::hash::nodeclass_hash(class),
            );
            stamp.insert(
                kerf_labels::aws::EC2NODECLASS_HASH_VERSION.to_string(),
                kerf_labels::aws::KERF_EC2NODECLASS_HASH_VERSION.to_string(),
            );
        }
        if !stamp.is_empty() {
            ctx.cluster
                .annotate_node_claim(claim::name(c), &stamp)
                .await?;
            n += 1;
        }
    }
    Ok(n)
}

async fn mark_drifted<C: Cluster, K: Cloud, P: Publisher>(
    ctx: &Ctx<C, K, P>,
    view: &View,
    plan: &Plan,
    report: &mut SweepReport,
) -> Result<(), ControlError> {
    for d in &plan.drifted {
        let Some(c) = view
            .snap
            .node_claims
            .iter()
            .find(|c| claim::name(c) == d.node_claim)
        else {
            continue;
        };
        if !claim::is_true(c, "Drifted") {
            let cond = condition("Drifted", ConditionStatus::True, d.reason.as_str(), "");
            ctx.cluster
                .set_node_claim_conditions(&d.node_claim, &[cond], ctx.now())
                .await?;
            ctx.log.info(
                DISRUPTION,
                "marked nodeclaim as drifted",
                json!({"NodeClaim": obj(&d.node_claim), "reason": d.reason.as_str()}),
            );
        }
        report.drifted.push(d.node_claim.clone());
    }
    Ok(())
}

/// Events for every skipped candidate (on its NodeClaim and, once registered, its Node, as
/// Karpenter publishes them), and the budgets as metrics.
async fn tell<C: Cluster, K: Cloud, P: Publisher>(ctx: &Ctx<C, K, P>, view: &View, plan: &Plan) {
    let told = plan.skipped.iter().filter(|s| {
        !matches!(
            s.kind,
            kerf_engine::plan::SkipKind::Nothing | kerf_engine::plan::SkipKind::Deleting
        )
    });
    let claim_uids: std::collections::HashMap<&str, &str> = view
        .snap
        .node_claims
        .iter()
        .filter_map(|c| Some((claim::name(c), c.metadata.uid.as_deref()?)))
        .collect();
    let node_uids: std::collections::HashMap<&str, &str> = view
        .snap
        .nodes
        .iter()
        .filter_map(|n| Some((n.metadata.name.as_deref()?, n.metadata.uid.as_deref()?)))
        .collect();
    let mut events = Vec::new();
    for s in told {
        let event = |involved: InvolvedObject| EventSpec {
            involved,
            type_: EventType::Normal,
            reason: if s.kind.blocks_every_method() {
                EventReason::DisruptionBlocked
            } else {
                EventReason::Unconsolidatable
            },
            message: s.reason.clone(),
        };
        events.push(event(InvolvedObject {
            api_version: "karpenter.sh/v1".into(),
            kind: "NodeClaim".into(),
            name: s.node_claim.clone(),
            namespace: String::new(),
            uid: claim_uids
                .get(s.node_claim.as_str())
                .map_or_else(String::new, |u| u.to_string()),
        }));
        if let Some(uid) = node_uids.get(s.node.as_str()) {
            events.push(event(InvolvedObject {
                api_version: "v1".into(),
                kind: "Node".into(),
                name: s.node.clone(),
                namespace: String::new(),
                uid: uid.to_string(),
            }));
        }
    }
    crate::events::emit_all(ctx, events).await;
    for b in &plan.budgets {
        ctx.metrics.count(
            ALLOWED_DISRUPTIONS,
            &[("nodepool", &b.node_pool), ("reason", b.reason.as_str())],
            b.allowed as f64,
        );
    }
}
