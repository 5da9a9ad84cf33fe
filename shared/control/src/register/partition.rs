//! Registration's placement-group step, as Karpenter's placement group registration hook: a
//! NodeClaim launched into a partition group without asking for a partition carries an empty
//! `karpenter.k8s.aws/placement-group-partition` label; before its Node registers, the
//! partition EC2 chose is read from the instance (`Placement.PartitionNumber`) and written on
//! the claim, from which registration copies it to the Node. Until the instance reports one,
//! registration waits.

use std::collections::BTreeMap;

use kerf_api::v1::NodeClaim;

use crate::claim;
use crate::ctx::Ctx;
use crate::error::ControlError;
use crate::names::{PLACEMENT_GROUP_ID, PLACEMENT_GROUP_PARTITION};
use crate::ports::{Cloud, Cluster, Publisher, cloud};

/// What the step did for one claim.
#[derive(Debug, Clone, PartialEq)]
pub enum Filled {
    /// The claim needs nothing.
    NotNeeded,
    /// The claim as labelled with its partition.
    Labelled(Box<NodeClaim>),
    /// The instance does not report a partition yet: registration waits.
    Waiting,
}

/// Whether `c` is in a placement group and waits for its partition.
pub fn needs_partition(c: &NodeClaim) -> bool {
    let labels = c.metadata.labels.as_ref();
    let label = |k: &str| labels.and_then(|l| l.get(k));
    label(PLACEMENT_GROUP_ID).is_some()
        && label(PLACEMENT_GROUP_PARTITION).is_some_and(String::is_empty)
}

/// Fills the claim's empty partition label from its instance.
pub async fn fill<C: Cluster, K: Cloud, P: Publisher>(
    ctx: &Ctx<C, K, P>,
    c: &NodeClaim,
) -> Result<Filled, ControlError> {
    if !needs_partition(c) {
        return Ok(Filled::NotNeeded);
    }
    let Some(id) = claim::provider_id(c).and_then(cloud::instance_id) else {
        return Ok(Filled::Waiting);
    };
    let found = ctx.cloud.describe(&[id.to_string()]).await?;
    let Some(p) = found.iter().find(|i| i.id == id).and_then(|i| i.partition) else {
        return Ok(Filled::Waiting);
    };
    let labels = BTreeMap::from([(PLACEMENT_GROUP_PARTITION.to_string(), p.to_string())]);
    let written = ctx
        .cluster
        .label_node_claim(claim::name(c), &labels)
        .await?;
    Ok(Filled::Labelled(Box::new(written)))
}
