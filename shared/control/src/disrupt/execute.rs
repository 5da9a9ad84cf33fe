//! Running a confirmed command, as Karpenter's disruption queue does: taint the candidates
//! `karpenter.sh/disrupted:NoSchedule` and set their `DisruptionReason`, record the command
//! on them, launch the replacements through the provisioning path (labelled with the
//! command), and delete the candidates only once every replacement is initialized
//! ([`super::progress`]); a command without replacements deletes at once. Expiry is
//! forceful: the claims are deleted, no budget, no validation.
//!
//! Emptiness is not held for a validation wait: its nodes are tainted first, then their pods
//! are read again, and the command goes on only if every node is still empty (the taint
//! keeps the scheduler from binding anything new, so what the read sees is final); otherwise
//! the taints come off and the command is abandoned as churn.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::Taint;
use kerf_api::v1::{ConditionStatus, NodeClaim};
use kerf_engine::plan::{CommandReason, Disruption, Method};
use serde_json::json;

use super::record::{self, Command};
use crate::claim::{self, condition};
use crate::ctx::Ctx;
use crate::error::ControlError;
use crate::log::{abbreviate, controllers::DISRUPTION};
use crate::metrics::names::{DISRUPTION_DECISIONS, FAILED_VALIDATIONS};
use crate::names::DISRUPTED_TAINT;

use crate::events::claim_event_of;
use crate::launch::{Creation, LaunchOutcome, create_claim, launch_claim};
use crate::ports::{Cloud, Cluster, Publisher, Queue};
use crate::ports::{EventReason, EventType};
use crate::view::View;

/// The `DisruptionReason` condition type.
pub const DISRUPTION_REASON: &str = "DisruptionReason";

fn disrupted_taint() -> Taint {
    Taint {
        key: DISRUPTED_TAINT.into(),
        value: None,
        effect: "NoSchedule".into(),
        time_added: None,
    }
}

/// Karpenter's log line: `disrupting nodeclaim(s) via replace, terminating 1 nodes (5 pods)
/// ip-…/c6a.2xlarge/on-demand and replacing with on-demand node from types m6a.large, …`.
fn describe(d: &Disruption, view: &View) -> String {
    let nodes: Vec<String> = d
        .node_claims
        .iter()
        .zip(&d.nodes)
        .map(|(c, n)| {
            let labels = view
                .snap
                .node_claims
                .iter()
                .find(|x| claim::name(x) == c)
                .and_then(|x| x.metadata.labels.clone())
                .unwrap_or_default();
            let get = |k: &str| labels.get(k).cloned().unwrap_or_default();
            format!(
                "{n}/{}/{}",
                get(kerf_labels::INSTANCE_TYPE),
                get(kerf_labels::CAPACITY_TYPE)
            )
        })
        .collect();
    let mut s = format!(
        "disrupting nodeclaim(s) via {}, terminating {} nodes ({} pods) {}",
        d.action.as_str(),
        d.node_claims.len(),
        d.pods.len(),
        nodes.join(", ")
    );
    if let Some(r) = d.replacements.first() {
        s.push_str(&format!(
            " and replacing with {} node from types {}",
            r.capacity_type.as_str(),
            abbreviate(&r.instance_type_options, 5)
        ));
    }
    s
}

/// Taints an emptiness command's nodes, then reads their pods: whether every node is still
/// empty. If not, the taints come off and the command is abandoned (churn).
async fn still_empty<C: Cluster, K: Cloud, P: Publisher>(
    ctx: &Ctx<C, K, P>,
    d: &Disruption,
) -> Result<bool, ControlError> {
    for n in &d.nodes {
        ctx.cluster.taint_node(n, &disrupted_taint()).await?;
    }
    let mut busy = None;
    for n in &d.nodes {
        let pods = ctx.cluster.pods_on_node(n).await?;
        let moving = pods.iter().find(|p| {
            kerf_convert::pod::pod(p)
                .is_ok_and(|m| kerf_engine::disruption::pods::is_reschedulable(&m))
        });
        if let Some(p) = moving {
            busy = Some((n.clone(), p.metadata.name.clone().unwrap_or_default()));
            break;
        }
    }
    let Some((node, pod)) = busy else {
        return Ok(true);
    };
    for n in &d.nodes {
        ctx.cluster.untaint_node(n, DISRUPTED_TAINT).await?;
    }
    ctx.log.info(
        DISRUPTION,
        &format!("abandoning emptiness command, churn: pod {pod} is on node {node}"),
        json!({"command": d.id, "NodeClaims": d.node_claims}),
    );
    ctx.metrics
        .count(FAILED_VALIDATIONS, &[("type", "churn")], 1.0);
    Ok(false)
}

/// Starts a confirmed command; whether it started (an emptiness command whose nodes are no
/// longer empty is abandoned).
pub async fn start<C: Cluster, K: Cloud, P: Publisher, Q: Queue>(
    ctx: &Ctx<C, K, P>,
    termination: &Q,
    view: &View,
    d: &Disruption,
) -> Result<bool, ControlError> {
    let now = ctx.now();
    let empty = d.method == Method::Emptiness;
    if empty && !still_empty(ctx, d).await? {
        return Ok(false);
    }
    ctx.log.info(
        DISRUPTION,
        &describe(d, view),
        json!({"command": d.id, "reason": d.reason, "decision": d.action, "savings-per-hour": d.savings_per_hour}),
    );
    for pool in &d.node_pools {
        ctx.metrics.count(
            DISRUPTION_DECISIONS,
            &[
                ("decision", d.action.as_str()),
                ("reason", d.reason.as_str()),
                ("nodepool", pool),
            ],
            1.0,
        );
    }
    announce(ctx, view, d).await;
    if d.method == Method::Expiration {
        delete_candidates(ctx, termination, d, CommandReason::Expired).await?;
        return Ok(true);
    }
    let rec = Command {
        id: d.id.clone(),
        reason: d.method.reason(),
        started: now,
        replacements: d.replacements.len(),
    };
    let cond = condition(
        DISRUPTION_REASON,
        ConditionStatus::True,
        d.method.condition_reason(),
        &d.id,
    );
    for (c, n) in d.node_claims.iter().zip(&d.nodes) {
        if !empty {
            // An emptiness command's nodes were tainted before their pods were read.
            ctx.cluster.taint_node(n, &disrupted_taint()).await?;
        }
        ctx.cluster
            .set_node_claim_conditions(c, std::slice::from_ref(&cond), now)
            .await?;
        let a = BTreeMap::from([(record::COMMAND.to_string(), record::text(&rec))]);
        ctx.cluster.annotate_node_claim(c, &a).await?;
    }
    if d.replacements.is_empty() {
        delete_candidates(ctx, termination, d, d.reason).await?;
        return Ok(true);
    }
    let labels = BTreeMap::from([(record::REPLACEMENT_OF.to_string(), d.id.clone())]);
    for r in &d.replacements {
        let created = create_claim(ctx, view, r, &labels, Creation::Replacement(d.reason)).await?;
        if let LaunchOutcome::Failed(e) = launch_claim(ctx, view, &created).await {
            ctx.log.warn(
                DISRUPTION,
                "replacement launch failed; the command will roll back",
                json!({"command": d.id, "error": e}),
            );
        }
    }
    Ok(true)
}

/// Karpenter's Events on each candidate NodeClaim: `DisruptionLaunching` when replacements
/// are launched, and `DisruptionTerminating` (`Disrupting NodeClaim: Underutilized/Delete`).
async fn announce<C: Cluster, K: Cloud, P: Publisher>(
    ctx: &Ctx<C, K, P>,
    view: &View,
    d: &Disruption,
) {
    let why = format!(
        "{}/{}",
        d.method.condition_reason(),
        capitalize(d.action.as_str())
    );
    for name in &d.node_claims {
        let Some(c) = view
            .snap
            .node_claims
            .iter()
            .find(|c| c.metadata.name.as_deref() == Some(name.as_str()))
        else {
            continue;
        };
        if !d.replacements.is_empty() {
            let m = format!("Launching NodeClaim: {why}");
            claim_event_of(
                ctx,
                c,
                EventType::Normal,
                EventReason::DisruptionLaunching,
                &m,
            )
            .await;
        }
        let m = format!("Disrupting NodeClaim: {why}");
        claim_event_of(
            ctx,
            c,
            EventType::Normal,
            EventReason::DisruptionTerminating,
            &m,
        )
        .await;
    }
}

fn capitalize(s: &str) -> String {
    let mut c = s.chars();
    c.next()
        .map(|f| f.to_uppercase().chain(c).collect())
        .unwrap_or_default()
}

/// Deletes the candidates of `d` and queues their termination.
pub async fn delete_candidates<C: Cluster, K: Cloud, P: Publisher, Q: Queue>(
    ctx: &Ctx<C, K, P>,
    termination: &Q,
    d: &Disruption,
    reason: CommandReason,
) -> Result<(), ControlError> {
    for (c, pool) in d.node_claims.iter().zip(&d.node_pools) {
        let why = crate::retire::Retirement::Disruption(reason);
        crate::retire::delete_one(ctx, termination, c, pool, why).await?;
    }
    Ok(())
}

/// Whether `c` is a replacement launched by command `id`.
pub fn replacement_of(c: &NodeClaim, id: &str) -> bool {
    c.metadata
        .labels
        .as_ref()
        .and_then(|l| l.get(record::REPLACEMENT_OF))
        .is_some_and(|v| v == id)
}
