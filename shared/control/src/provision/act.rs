//! Acting on a plan: create NodeClaims, launch them (new ones and ones a crashed pass left
//! unlaunched, see [`crate::launch`]), nominate the pods and report the rest.

use futures::StreamExt;
use futures::stream;
use kerf_api::v1::NodeClaim;
use kerf_engine::plan::{Launch, Plan, ReasonKind, Unschedulable};

use super::ProvisionReport;
use super::notify::{self, Notes};
use crate::claim;
use crate::ctx::Ctx;
use crate::launch::{CreateError, Creation, LaunchOutcome, create_claim, launch_claim};
use crate::names::conditions::LAUNCHED;
use crate::ports::{Cloud, Cluster, Publisher};
use crate::view::View;

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
    let created: Vec<(&Launch, Result<NodeClaim, CreateError>)> =
        stream::iter(plan.launches.iter().map(|l| async move {
            (
                l,
                create_claim(ctx, view, l, &Default::default(), Creation::Provisioning).await,
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
