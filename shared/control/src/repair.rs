//! Node repair (Karpenter's `NodeRepair` gate, off by default): a Node whose condition matches
//! one of the AWS provider's repair policies for longer than the policy tolerates is repaired
//! by force, as Karpenter's `node.health` controller does: its NodeClaim's termination
//! deadline is set to now (the drain does not wait for PodDisruptionBudgets or the grace
//! period) and the NodeClaim is deleted; the provisioner replaces what its pods need. Never
//! while more than 20% (rounded up) of the NodePool's nodes are unhealthy (of the cluster's,
//! for a NodeClaim without a pool): the repair is then blocked with a `NodeRepairBlocked`
//! Event and looked at again in 5 minutes. Disruption budgets do not apply.
//!
//! The decision ([`decide`]) is pure; [`run`] acts on it in the disruption function's pass,
//! and the earliest deadline still ahead is a timer message (time lives in the queue).

use std::collections::BTreeMap;

use jiff::{SignedDuration, Timestamp};
use k8s_openapi::api::core::v1::Node;
use kerf_api::v1::NodeClaim;

use crate::claim;
use crate::ctx::Ctx;
use crate::error::ControlError;
use crate::events::{claim_object, emit_all, node_object};
use crate::log::controllers::HEALTH;
use crate::metrics::names::NODECLAIMS_UNHEALTHY_DISRUPTED;
use crate::ports::{
    Cloud, Cluster, EventReason, EventSpec, EventType, Publisher, Queue, TimerKind,
};
use crate::retire::{self, Retirement};
use crate::timers::set_timer;
use crate::view::View;

/// A Node condition that, held for `toleration`, makes the node due for repair.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Policy {
    pub condition: &'static str,
    pub status: &'static str,
    pub toleration: SignedDuration,
}

const fn policy(condition: &'static str, status: &'static str, mins: i64) -> Policy {
    Policy {
        condition,
        status,
        toleration: SignedDuration::from_mins(mins),
    }
}

/// The AWS provider's repair policies: the kubelet's `Ready`, and the Node Monitoring
/// Agent's conditions.
pub const POLICIES: [Policy; 7] = [
    policy("Ready", "False", 30),
    policy("Ready", "Unknown", 30),
    policy("AcceleratedHardwareReady", "False", 10),
    policy("StorageReady", "False", 30),
    policy("NetworkingReady", "False", 30),
    policy("KernelReady", "False", 30),
    policy("ContainerRuntimeReady", "False", 30),
];

/// How many of a group's nodes may be unhealthy for its repairs to go on, in percent
/// (rounded up), as Karpenter's `allowedUnhealthyPercent`.
pub const ALLOWED_UNHEALTHY_PERCENT: usize = 20;

/// How soon a blocked repair is looked at again.
pub const BLOCKED_RETRY: SignedDuration = SignedDuration::from_mins(5);

/// A node unhealthy under a policy: the condition, and when its toleration runs out.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unhealthy {
    pub condition: String,
    pub due: Timestamp,
}

/// The policy condition of `node` whose toleration runs out first, if any matches.
pub fn unhealthy(node: &Node) -> Option<Unhealthy> {
    let conditions = node.status.as_ref()?.conditions.as_ref()?;
    POLICIES
        .iter()
        .filter_map(|p| {
            let c = conditions
                .iter()
                .find(|c| c.type_ == p.condition && c.status == p.status)?;
            let since = c.last_transition_time.as_ref()?.0;
            Some(Unhealthy {
                condition: p.condition.to_string(),
                due: since + p.toleration,
            })
        })
        .min_by_key(|u| u.due)
}

/// One NodeClaim to repair now.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Repair {
    pub node_claim: String,
    pub node: String,
    /// Empty for a NodeClaim without a pool.
    pub pool: String,
    pub condition: String,
    /// Already being deleted: only its deadline moves to now.
    pub deleting: bool,
}

/// What the pass does about unhealthy nodes.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Decision {
    pub repair: Vec<Repair>,
    /// Due, but too many of their group's nodes are unhealthy.
    pub blocked: Vec<Repair>,
    /// The earliest toleration still running out, and the NodeClaims it concerns.
    pub next: Option<(Timestamp, Vec<String>)>,
}

/// Whether at most [`ALLOWED_UNHEALTHY_PERCENT`] (rounded up) of `nodes` are unhealthy.
fn group_healthy<'a>(nodes: impl Iterator<Item = &'a Node>) -> bool {
    let (mut total, mut bad) = (0_usize, 0_usize);
    for n in nodes {
        total += 1;
        bad += usize::from(unhealthy(n).is_some());
    }
    bad <= (total * ALLOWED_UNHEALTHY_PERCENT).div_ceil(100)
}

fn pool_of(n: &Node) -> Option<&str> {
    n.metadata
        .labels
        .as_ref()?
        .get(kerf_labels::NODEPOOL)
        .map(String::as_str)
}

/// Which unhealthy nodes' NodeClaims to repair at `now`, which are blocked, and when to look
/// again.
pub fn decide(view: &View, now: Timestamp) -> Decision {
    let by_pid: BTreeMap<&str, &NodeClaim> = view
        .snap
        .node_claims
        .iter()
        .filter_map(|c| Some((c.status.as_ref()?.provider_id.as_deref()?, c)))
        .collect();
    let mut healthy: BTreeMap<String, bool> = BTreeMap::new();
    let mut out = Decision::default();
    for n in &view.snap.nodes {
        let Some(u) = unhealthy(n) else { continue };
        let pid = n.spec.as_ref().and_then(|s| s.provider_id.as_deref());
        let Some(c) = pid.and_then(|p| by_pid.get(p)) else {
            continue;
        };
        let name = claim::name(c).to_string();
        if u.due > now {
            match &mut out.next {
                Some((at, names)) if *at == u.due => names.push(name),
                Some((at, _)) if *at < u.due => {}
                next => *next = Some((u.due, vec![name])),
            }
            continue;
        }
        let pool = claim::pool_name(c).unwrap_or_default().to_string();
        let ok = *healthy.entry(pool.clone()).or_insert_with(|| {
            let all = view.snap.nodes.iter();
            if pool.is_empty() {
                group_healthy(all)
            } else {
                group_healthy(all.filter(|m| pool_of(m) == Some(pool.as_str())))
            }
        });
        let r = Repair {
            node_claim: name,
            node: n.metadata.name.clone().unwrap_or_default(),
            pool,
            condition: u.condition,
            deleting: c.metadata.deletion_timestamp.is_some(),
        };
        if ok {
            out.repair.push(r);
        } else {
            out.blocked.push(r);
        }
    }
    out
}

/// What a pass repaired.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Report {
    pub repaired: Vec<String>,
    pub blocked: Vec<String>,
}

/// Repairs what [`decide`] says, tells of what is blocked, and arms the next look.
pub async fn run<C: Cluster, K: Cloud, P: Publisher, Q: Queue>(
    ctx: &Ctx<C, K, P>,
    termination: &Q,
    timers: &Q,
    view: &View,
) -> Result<Report, ControlError> {
    let d = decide(view, ctx.now());
    let mut report = Report::default();
    for r in &d.repair {
        repair_one(ctx, termination, view, r).await?;
        report.repaired.push(r.node_claim.clone());
    }
    if !d.blocked.is_empty() {
        emit_all(ctx, blocked_events(view, &d.blocked)).await;
        let names: Vec<String> = d.blocked.iter().map(|r| r.node_claim.clone()).collect();
        let at = ctx.now() + BLOCKED_RETRY;
        set_timer(ctx, timers, HEALTH, TimerKind::Due, at, &names).await;
        report.blocked = names;
    }
    if let Some((at, names)) = &d.next {
        set_timer(ctx, timers, HEALTH, TimerKind::Due, *at, names).await;
    }
    Ok(report)
}

/// Deadline now, then the deletion (once), counted as Karpenter counts a repair.
async fn repair_one<C: Cluster, K: Cloud, P: Publisher, Q: Queue>(
    ctx: &Ctx<C, K, P>,
    termination: &Q,
    view: &View,
    r: &Repair,
) -> Result<(), ControlError> {
    let c = view
        .snap
        .node_claims
        .iter()
        .find(|c| claim::name(c) == r.node_claim);
    let deadline = c
        .and_then(|c| c.metadata.annotations.as_ref())
        .and_then(|a| a.get(kerf_labels::NODECLAIM_TERMINATION_TIMESTAMP))
        .and_then(|t| t.parse::<Timestamp>().ok());
    if deadline.is_none_or(|t| t > ctx.now()) {
        let now = BTreeMap::from([(
            kerf_labels::NODECLAIM_TERMINATION_TIMESTAMP.to_string(),
            claim::rfc3339(ctx.now()),
        )]);
        ctx.cluster.annotate_node_claim(&r.node_claim, &now).await?;
    }
    if r.deleting {
        return Ok(());
    }
    let why = Retirement::Repair {
        condition: &r.condition,
    };
    retire::delete_one(ctx, termination, &r.node_claim, &r.pool, why).await?;
    let label = |key: &str| {
        c.and_then(|c| c.metadata.labels.as_ref())
            .and_then(|l| l.get(key))
            .cloned()
            .unwrap_or_default()
    };
    let image = c
        .and_then(|c| c.status.as_ref())
        .and_then(|s| s.image_id.clone())
        .unwrap_or_default();
    ctx.metrics.count(
        NODECLAIMS_UNHEALTHY_DISRUPTED,
        &[
            ("condition", &snake_case(&r.condition)),
            ("nodepool", &r.pool),
            ("capacity_type", &label(kerf_labels::CAPACITY_TYPE)),
            ("image_id", &image),
        ],
        1.0,
    );
    Ok(())
}

/// `NodeRepairBlocked` on the Node and its NodeClaim.
fn blocked_events(view: &View, blocked: &[Repair]) -> Vec<EventSpec> {
    let mut out = Vec::new();
    for r in blocked {
        let message = if r.pool.is_empty() {
            format!("more than {ALLOWED_UNHEALTHY_PERCENT}% nodes are unhealthy in the cluster")
        } else {
            format!("more than {ALLOWED_UNHEALTHY_PERCENT}% nodes are unhealthy in the nodepool")
        };
        let ev = |involved| EventSpec {
            involved,
            type_: EventType::Warning,
            reason: EventReason::NodeRepairBlocked,
            message: message.clone(),
        };
        let node = view
            .snap
            .nodes
            .iter()
            .find(|n| n.metadata.name.as_deref() == Some(&r.node));
        out.extend(node.map(|n| ev(node_object(n))));
        let c = view
            .snap
            .node_claims
            .iter()
            .find(|c| claim::name(c) == r.node_claim);
        out.extend(c.map(|c| ev(claim_object(c))));
    }
    out
}

/// `AcceleratedHardwareReady` → `accelerated_hardware_ready`, as Karpenter labels the metric.
pub fn snake_case(s: &str) -> String {
    let mut out = String::new();
    for (i, ch) in s.chars().enumerate() {
        if ch.is_ascii_uppercase() && i > 0 {
            out.push('_');
        }
        out.push(ch.to_ascii_lowercase());
    }
    out
}

#[cfg(test)]
#[path = "repair_tests.rs"]
mod tests;
