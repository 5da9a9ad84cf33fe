//! Reservations that end under running nodes (Karpenter's `capacityreservation.capacitytype`):
//! when a capacity reservation is cancelled or ends, EC2 keeps its instances running as plain
//! on-demand instances. A NodeClaim still labelled `karpenter.sh/capacity-type=reserved` whose
//! instance EC2 now reports on-demand is relabelled `on-demand` and loses the reservation
//! labels, and so does its registered Node, so scheduling, pricing and consolidation see the
//! node it now is. Only reserved → on-demand: an instance never moves into a reservation.
//! The decision is [`demotions`], pure.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::Node;
use kerf_api::v1::NodeClaim;
use kerf_catalog::CapacityType;
use kerf_labels::aws::RESERVATION_LABELS;
use kerf_labels::{CAPACITY_TYPE, CAPACITY_TYPE_ON_DEMAND, CAPACITY_TYPE_RESERVED, REGISTERED};
use serde_json::json;

use crate::claim;
use crate::claim::node_provider_id;
use crate::ctx::Ctx;
use crate::error::ControlError;
use crate::instances::Instances;
use crate::log::controllers::CAPACITY_RESERVATION_CAPACITY_TYPE;
use crate::ports::{Cloud, Cluster, Publisher};

/// A NodeClaim (and its registered Node, if any) to relabel `on-demand`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Demotion {
    pub node_claim: String,
    pub node: Option<String>,
}

fn labelled_reserved(labels: Option<&BTreeMap<String, String>>) -> bool {
    labels
        .and_then(|l| l.get(CAPACITY_TYPE))
        .is_some_and(|v| v == CAPACITY_TYPE_RESERVED)
}

/// The live NodeClaims labelled `reserved` whose instance EC2 reports on-demand, with their
/// registered Node when it is still labelled `reserved` (a Node not registered yet is left
/// for a later pass: its labels may not be synced).
pub fn demotions(claims: &[NodeClaim], nodes: &[Node], instances: &Instances) -> Vec<Demotion> {
    claims
        .iter()
        .filter(|c| c.metadata.deletion_timestamp.is_none())
        .filter_map(|c| {
            let pid = claim::provider_id(c)?;
            let now_on_demand = instances
                .get(pid)
                .is_some_and(|i| i.capacity_type == CapacityType::OnDemand);
            let node = nodes.iter().find(|n| {
                let labels = n.metadata.labels.as_ref();
                node_provider_id(n) == Some(pid)
                    && n.metadata.deletion_timestamp.is_none()
                    && labels
                        .and_then(|l| l.get(REGISTERED))
                        .is_some_and(|v| v == "true")
                    && labelled_reserved(labels)
            });
            let claim_reserved = labelled_reserved(c.metadata.labels.as_ref());
            (now_on_demand && (claim_reserved || node.is_some())).then(|| Demotion {
                node_claim: claim::name(c).to_string(),
                node: node.and_then(|n| n.metadata.name.clone()),
            })
        })
        .collect()
}

/// The labels an on-demand node carries instead of its reservation's.
pub fn on_demand_labels() -> BTreeMap<String, Option<String>> {
    let mut out: BTreeMap<String, Option<String>> = RESERVATION_LABELS
        .iter()
        .map(|k| (k.to_string(), None))
        .collect();
    out.insert(CAPACITY_TYPE.into(), Some(CAPACITY_TYPE_ON_DEMAND.into()));
    out
}

/// Relabels the NodeClaims (and Nodes) whose reservation ended; their names.
pub async fn demote<C: Cluster, K: Cloud, P: Publisher>(
    ctx: &Ctx<C, K, P>,
    claims: &[NodeClaim],
    nodes: &[Node],
    instances: &Instances,
) -> Result<Vec<String>, ControlError> {
    let labels = on_demand_labels();
    let mut done = Vec::new();
    for d in demotions(claims, nodes, instances) {
        match ctx.cluster.relabel_node_claim(&d.node_claim, &labels).await {
            Err(e) if !e.is_not_found() => return Err(e.into()),
            _ => {}
        }
        if let Some(n) = &d.node {
            match ctx.cluster.relabel_node(n, &labels).await {
                Err(e) if !e.is_not_found() => return Err(e.into()),
                _ => {}
            }
        }
        done.push(d.node_claim);
    }
    if !done.is_empty() {
        ctx.log.info(
            CAPACITY_RESERVATION_CAPACITY_TYPE,
            "updated capacity type for nodeclaims",
            json!({"NodeClaims": done}),
        );
    }
    Ok(done)
}

#[cfg(test)]
#[path = "capacity_type_tests.rs"]
mod tests;
