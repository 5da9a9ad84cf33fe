//! Termination: the state machine that takes a NodeClaim being deleted (its Node and its
//! instance) down safely, one idempotent step per pass, as Karpenter's NodeClaim and Node
//! finalizers do:
//!
//! 1. record the termination grace period's deadline (`karpenter.sh/nodeclaim-termination-timestamp`);
//! 2. taint the Node `karpenter.sh/disrupted:NoSchedule`, label it out of load balancers;
//! 3. drain it ([`drain`]), passing again until no pod waits and it has been Draining for
//!    [`MIN_DRAIN_TIME`] (a Node that is not Ready and whose instance is gone has nothing left
//!    to drain);
//! 4. wait until the node's volumes are detached ([`volumes`]), unless the grace period is
//!    over;
//! 5. terminate the instance and wait until it is gone;
//! 6. delete the Node and remove the finalizers.
//!
//! A pass returns [`Step::Requeue`] with a delay while there is something to wait for; the
//! termination function re-queues its message with that delay. Re-delivering a message at
//! any step is harmless: every step checks the state first.

pub mod drain;
pub mod volumes;

use std::collections::BTreeMap;

use jiff::{SignedDuration, Timestamp};
use k8s_openapi::api::core::v1::{Node, Taint};
use kerf_api::v1::{ConditionStatus, NodeClaim};
use serde_json::json;

use crate::claim::{self, condition};
use crate::ctx::Ctx;
use crate::error::ControlError;
use crate::finalize;
use crate::log::{controllers::TERMINATION, obj};
use crate::metrics::names::{NODECLAIMS_TERMINATED, PODS_DRAINED};
use crate::names::DISRUPTED_TAINT;
use crate::ports::cloud::instance_id;
use crate::ports::{Cloud, Cluster, Publisher, Target};

/// Wait between drain passes.
pub const DRAIN_REQUEUE: u32 = 5;
/// Wait between instance-termination checks (Karpenter polls every 5 s).
pub const INSTANCE_REQUEUE: u32 = 5;

/// Karpenter's `MinDrainTime`: a node stays Draining at least this long before it counts as
/// drained, so pods kube-scheduler bound before it saw the taint are drained too.
pub const MIN_DRAIN_TIME: SignedDuration = SignedDuration::from_secs(5);

use crate::teardown::DRAINED;
pub use crate::teardown::{draining_since, in_progress};

/// What a pass left to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// Nothing more: the NodeClaim is gone (or was never being deleted).
    Done,
    /// Come back after this many seconds.
    Requeue { seconds: u32, why: String },
}

/// The deadline of a deleting claim: its annotation, else deletion time + grace period.
pub fn deadline(c: &NodeClaim) -> Option<Timestamp> {
    let annotated = c
        .metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(kerf_labels::NODECLAIM_TERMINATION_TIMESTAMP))
        .and_then(|v| v.parse().ok());
    annotated.or_else(|| {
        let deleted = c.metadata.deletion_timestamp.as_ref()?.0;
        let tgp = c.spec.termination_grace_period.as_deref()?;
        let span: jiff::Span = tgp.parse().ok()?;
        Some(deleted + SignedDuration::try_from(span).ok()?)
    })
}

fn node_ready(n: &Node) -> bool {
    n.status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .is_some_and(|cs| cs.iter().any(|c| c.type_ == "Ready" && c.status == "True"))
}

fn tainted(n: &Node) -> bool {
    n.spec
        .as_ref()
        .and_then(|s| s.taints.as_ref())
        .is_some_and(|ts| ts.iter().any(|t| t.key == DISRUPTED_TAINT))
}

/// One pass for the NodeClaim `name`.
pub async fn terminate<C: Cluster, K: Cloud, P: Publisher>(
    ctx: &Ctx<C, K, P>,
    name: &str,
) -> Result<Step, ControlError> {
    let Some(c) = ctx.cluster.node_claim(name).await? else {
        return Ok(Step::Done);
    };
    if !claim::deleting_ours(&c.metadata) {
        return Ok(Step::Done);
    }
    let now = ctx.now();
    let deadline = record_deadline(ctx, &c).await?;
    let node = match claim::status(&c).node_name {
        Some(n) => ctx.cluster.node(&n).await?,
        None => None,
    };
    let instances = match claim::provider_id(&c).and_then(instance_id) {
        Some(id) => ctx.cloud.describe(&[id.to_string()]).await?,
        None => Vec::new(),
    };
    let instance_gone = instances.iter().all(|i| i.state == "terminated");
    if let Some(n) = &node
        && (node_ready(n) || !instance_gone)
        && let Some(step) = drain_node(ctx, &c, n, deadline, now).await?
    {
        return Ok(step);
    }
    if !instance_gone {
        if instances.iter().any(|i| !i.is_terminating()) {
            if let Some(n) = node.as_ref().and_then(|n| n.metadata.name.as_deref())
                && let Some(step) =
                    Box::pin(volumes::await_detachment(ctx, &c, n, deadline, now)).await?
            {
                return Ok(step);
            }
            ctx.cloud
                .terminate(&instances.iter().map(|i| i.id.clone()).collect::<Vec<_>>())
                .await?;
            let cond = condition(
                "InstanceTerminating",
                ConditionStatus::True,
                "InstanceTerminating",
                "",
            );
            ctx.cluster
                .set_node_claim_conditions(name, &[cond], now)
                .await?;
        }
        return Ok(Step::Requeue {
            seconds: INSTANCE_REQUEUE,
            why: "waiting for the instance to terminate".into(),
        });
    }
    if let Some(n) = &node {
        let node_name = n.metadata.name.clone().unwrap_or_default();
        ctx.cluster.delete_node(&node_name, None).await?;
        finalize::remove_finalizer(ctx, &Target::Node(node_name.clone())).await?;
        ctx.log.info(
            TERMINATION,
            "deleted node",
            json!({"Node": obj(&node_name), "NodeClaim": obj(name)}),
        );
    }
    finalize::remove_finalizer(ctx, &Target::NodeClaim(name.to_string())).await?;
    let pool = claim::pool_name(&c).unwrap_or_default().to_string();
    ctx.metrics.count(
        NODECLAIMS_TERMINATED,
        &[("nodepool", &pool), ("reason", "deleted")],
        1.0,
    );
    ctx.log.info(TERMINATION, "deleted nodeclaim", json!({"NodeClaim": obj(name), "NodePool": obj(&pool), "provider-id": claim::provider_id(&c)}));
    Ok(Step::Done)
}

/// Writes the deadline annotation once (deletion time + terminationGracePeriod).
async fn record_deadline<C: Cluster, K: Cloud, P: Publisher>(
    ctx: &Ctx<C, K, P>,
    c: &NodeClaim,
) -> Result<Option<Timestamp>, ControlError> {
    let d = deadline(c);
    let annotated = c
        .metadata
        .annotations
        .as_ref()
        .is_some_and(|a| a.contains_key(kerf_labels::NODECLAIM_TERMINATION_TIMESTAMP));
    if let Some(d) = d
        && !annotated
    {
        let a = BTreeMap::from([(
            kerf_labels::NODECLAIM_TERMINATION_TIMESTAMP.to_string(),
            claim::rfc3339(d),
        )]);
        ctx.cluster.annotate_node_claim(claim::name(c), &a).await?;
    }
    Ok(d)
}

/// Taints and drains; `Some(step)` while pods remain.
async fn drain_node<C: Cluster, K: Cloud, P: Publisher>(
    ctx: &Ctx<C, K, P>,
    c: &NodeClaim,
    n: &Node,
    deadline: Option<Timestamp>,
    now: Timestamp,
) -> Result<Option<Step>, ControlError> {
    let node_name = n.metadata.name.clone().unwrap_or_default();
    if !tainted(n) {
        let taint = Taint {
            key: DISRUPTED_TAINT.into(),
            effect: "NoSchedule".into(),
            value: None,
            time_added: None,
        };
        ctx.cluster.taint_node(&node_name, &taint).await?;
        let labels = BTreeMap::from([(
            kerf_labels::EXCLUDE_FROM_LOAD_BALANCERS.to_string(),
            "karpenter".to_string(),
        )]);
        ctx.cluster.label_node(&node_name, &labels).await?;
        ctx.log.info(
            TERMINATION,
            "tainted node",
            json!({"Node": obj(&node_name), "NodeClaim": obj(claim::name(c)),
            "taint.Key": DISRUPTED_TAINT, "taint.Effect": "NoSchedule"}),
        );
    }
    let pods = ctx.cluster.pods_on_node(&node_name).await?;
    let pass = drain::pass(&ctx.cluster, &pods, deadline, now).await?;
    let pool = claim::pool_name(c).unwrap_or_default().to_string();
    let drained = pass.evicted.len() + pass.forced.len();
    if drained > 0 {
        ctx.metrics
            .count(PODS_DRAINED, &[("nodepool", &pool)], drained as f64);
    }
    notify(ctx, &pass, &node_name).await;
    if pass.drained() {
        return settle_drain(ctx, c, deadline, now).await;
    }
    let cond = condition(
        DRAINED,
        ConditionStatus::Unknown,
        "Draining",
        &format!("{} pod(s) waiting to be evicted", pass.waiting),
    );
    ctx.cluster
        .set_node_claim_conditions(claim::name(c), &[cond], now)
        .await?;
    // The next pass comes at the next poll, or sooner when a pod's forced deletion is due.
    let seconds = drain::next_force(&pods, deadline, now).map_or(DRAIN_REQUEUE, |t| {
        whole_seconds(t.duration_since(now)).min(DRAIN_REQUEUE)
    });
    Ok(Some(Step::Requeue {
        seconds,
        why: format!("{} pod(s) waiting to be evicted", pass.waiting),
    }))
}

/// `d` in whole seconds, rounded up, at least 1 (SQS delays are whole seconds).
fn whole_seconds(d: SignedDuration) -> u32 {
    let whole = d.as_secs() + i64::from(d.subsec_nanos() > 0);
    u32::try_from(whole.max(1)).unwrap_or(u32::MAX)
}

/// A node with nothing left to evict: `Drained` once it has been Draining for
/// [`MIN_DRAIN_TIME`] (or the grace period is over), else a requeue for the moment it will
/// have been, as Karpenter waits.
async fn settle_drain<C: Cluster, K: Cloud, P: Publisher>(
    ctx: &Ctx<C, K, P>,
    c: &NodeClaim,
    deadline: Option<Timestamp>,
    now: Timestamp,
) -> Result<Option<Step>, ControlError> {
    let name = claim::name(c);
    let overdue = deadline.is_some_and(|d| now >= d);
    let since = draining_since(c);
    if claim::is_true(c, DRAINED) || overdue || since.is_some_and(|t| now >= t + MIN_DRAIN_TIME) {
        let cond = condition(DRAINED, ConditionStatus::True, DRAINED, "");
        ctx.cluster
            .set_node_claim_conditions(name, &[cond], now)
            .await?;
        return Ok(None);
    }
    if since.is_none() {
        let cond = condition(DRAINED, ConditionStatus::Unknown, "Draining", "");
        ctx.cluster
            .set_node_claim_conditions(name, &[cond], now)
            .await?;
    }
    let seconds = whole_seconds((since.unwrap_or(now) + MIN_DRAIN_TIME).duration_since(now));
    Ok(Some(Step::Requeue {
        seconds,
        why: "the node's minimum drain time".into(),
    }))
}

async fn notify<C: Cluster, K: Cloud, P: Publisher>(
    ctx: &Ctx<C, K, P>,
    pass: &drain::DrainPass,
    node: &str,
) {
    let mut events = Vec::new();
    for p in &pass.evicted {
        events.push(pod_event(
            p,
            crate::ports::EventType::Normal,
            crate::ports::EventReason::Evicted,
            &format!("Evicted pod: draining node {node}"),
        ));
    }
    for (p, why) in &pass.blocked {
        events.push(pod_event(
            p,
            crate::ports::EventType::Warning,
            crate::ports::EventReason::FailedDraining,
            &format!("Failed to drain node, {why}"),
        ));
    }
    if !events.is_empty() {
        crate::events::emit_all(ctx, events).await;
    }
}

fn pod_event(
    key: &str,
    type_: crate::ports::EventType,
    reason: crate::ports::EventReason,
    message: &str,
) -> crate::ports::EventSpec {
    let (ns, name) = key.split_once('/').unwrap_or(("default", key));
    crate::ports::EventSpec {
        involved: crate::ports::InvolvedObject {
            api_version: "v1".into(),
            kind: "Pod".into(),
            name: name.into(),
            namespace: ns.into(),
            uid: String::new(),
        },
        type_,
        reason,
        message: message.into(),
    }
}
