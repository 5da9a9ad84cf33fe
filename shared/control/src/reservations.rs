//! Capacity blocks ending (Karpenter's `capacityreservation.expiration`): a NodeClaim
//! launched into a capacity block whose node class status shows the block `expiring` (40
//! minutes before its end, ten before EC2 starts reclaiming its instances) is deleted, so its
//! pods move while there is time. The status comes from the node class refresh every sweep
//! makes first; the decision is [`expiring`], pure. Reservations that end under running
//! nodes are [`capacity_type`]'s.

pub mod capacity_type;

use kerf_api::v1::{EC2NodeClass, NodeClaim};
use kerf_catalog::reservation::ReservationState;
use kerf_labels::aws::CAPACITY_RESERVATION_ID;

use crate::claim;
use crate::ctx::Ctx;
use crate::error::ControlError;
use crate::ports::{Cloud, Cluster, Publisher, Queue};
use crate::retire::{Retirement, delete_one};
use crate::view::View;

/// A NodeClaim to delete, and the capacity block it runs in.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Expiring {
    pub node_claim: String,
    pub node_pool: String,
    pub reservation: String,
}

/// The live NodeClaims whose reservation their class's status shows expiring.
pub fn expiring<'c>(
    claims: impl Iterator<Item = &'c NodeClaim>,
    class: impl Fn(&str) -> Option<&'c EC2NodeClass>,
) -> Vec<Expiring> {
    claims
        .filter_map(|c| {
            let id = c.metadata.labels.as_ref()?.get(CAPACITY_RESERVATION_ID)?;
            let status = class(&c.spec.node_class_ref.name)?.status.as_ref()?;
            let ending = status
                .capacity_reservations
                .iter()
                .any(|r| &r.id == id && r.state == ReservationState::Expiring.as_str());
            ending.then(|| Expiring {
                node_claim: claim::name(c).to_string(),
                node_pool: claim::pool_name(c).unwrap_or_default().to_string(),
                reservation: id.clone(),
            })
        })
        .collect()
}

/// Deletes the NodeClaims of expiring capacity blocks; their names.
pub async fn expire<C: Cluster, K: Cloud, P: Publisher, Q: Queue>(
    ctx: &Ctx<C, K, P>,
    termination: &Q,
    view: &View,
) -> Result<Vec<String>, ControlError> {
    let found = expiring(view.live_claims(), |name| {
        view.classes.get(name).map(|c| c.as_ref())
    });
    let mut deleted = Vec::new();
    for e in found {
        let why = Retirement::CapacityBlockExpiring {
            reservation: &e.reservation,
        };
        delete_one(ctx, termination, &e.node_claim, &e.node_pool, why).await?;
        deleted.push(e.node_claim);
    }
    Ok(deleted)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn claim(name: &str, reservation: Option<&str>) -> NodeClaim {
        let mut labels = json!({"karpenter.sh/nodepool": "gpu"});
        if let Some(r) = reservation {
            labels[CAPACITY_RESERVATION_ID] = json!(r);
        }
        let meta = json!({"name": name, "labels": labels});
        serde_json::from_value(json!({"apiVersion": "karpenter.sh/v1", "kind": "NodeClaim",
            "metadata": meta,
            "spec": {"requirements": [], "nodeClassRef": {"group": "karpenter.k8s.aws",
                "kind": "EC2NodeClass", "name": "gpu"}}}))
        .unwrap()
    }

    fn class() -> EC2NodeClass {
        let cr = |id: &str, state: &str| {
            json!({"id": id, "availabilityZone": "us-west-2a",
            "instanceType": "p5.48xlarge", "instanceMatchCriteria": "targeted",
            "ownerID": "012345678901", "reservationType": "capacity-block", "state": state,
            "endTime": "2026-06-01T12:30:00Z"})
        };
        serde_json::from_value(json!({"apiVersion": "karpenter.k8s.aws/v1", "kind": "EC2NodeClass",
            "metadata": {"name": "gpu"},
            "spec": {"role": "r", "amiSelectorTerms": [{"alias": "al2023@latest"}],
                "subnetSelectorTerms": [{"tags": {"a": "b"}}],
                "securityGroupSelectorTerms": [{"tags": {"a": "b"}}]},
            "status": {"capacityReservations": [cr("cr-ending", "expiring"), cr("cr-later", "active")]}}))
        .unwrap()
    }

    #[test]
    fn only_claims_in_an_expiring_block_go() {
        let class = class();
        let claims = [
            claim("gpu-a", Some("cr-ending")),
            claim("gpu-b", Some("cr-later")),
            claim("gpu-c", None),
            claim("gpu-d", Some("cr-unknown")),
        ];
        let found = expiring(claims.iter(), |n| (n == "gpu").then_some(&class));
        assert_eq!(
            found,
            vec![Expiring {
                node_claim: "gpu-a".into(),
                node_pool: "gpu".into(),
                reservation: "cr-ending".into(),
            }]
        );
        assert!(
            expiring(claims.iter(), |_| None).is_empty(),
            "no class, no status"
        );
    }
}
