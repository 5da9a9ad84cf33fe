//! Creating the NodeClaim of a planned launch, before its instance exists.

use kerf_api::v1::NodeClaim;
use kerf_engine::plan::{CommandReason, Launch};
use serde_json::json;

use crate::claim;
use crate::ctx::Ctx;
use crate::error::ControlError;
use crate::log::{abbreviate, controllers::PROVISIONER, obj};
use crate::metrics::names::NODECLAIMS_CREATED;
use crate::ports::{Cloud, Cluster, ClusterError, Publisher};
use crate::view::View;

/// Why a NodeClaim is created.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Creation {
    /// For pending pods.
    Provisioning,
    /// To bring a static NodePool up to its replicas.
    Static,
    /// To replace the candidates of a disruption command.
    Replacement(CommandReason),
    /// To replace a node EC2 is about to take back.
    Interruption,
}

impl Creation {
    /// The `reason` it is counted under in `karpenter_nodeclaims_created_total`.
    pub fn reason(self) -> &'static str {
        match self {
            Creation::Provisioning => "provisioning",
            Creation::Static => "provisioned",
            Creation::Replacement(r) => r.as_str(),
            Creation::Interruption => "interrupted",
        }
    }
}

/// Why a planned NodeClaim was not created.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CreateError {
    /// The launch's NodePool no longer exists.
    #[error("nodepool {0} is gone")]
    PoolGone(String),
    #[error(transparent)]
    Cluster(#[from] ClusterError),
}

impl From<CreateError> for ControlError {
    /// A claim that cannot be created is not retried by the reconcile that planned it.
    fn from(e: CreateError) -> Self {
        ControlError::Invalid(e.to_string())
    }
}

/// Creates the NodeClaim of a planned launch (`labels` added to the pool's), logged and
/// counted under the reason of `why`.
pub async fn create_claim<C: Cluster, K: Cloud, P: Publisher>(
    ctx: &Ctx<C, K, P>,
    view: &View,
    l: &Launch,
    labels: &std::collections::BTreeMap<String, String>,
    why: Creation,
) -> Result<NodeClaim, CreateError> {
    let pool = view
        .pool(&l.node_pool)
        .ok_or_else(|| CreateError::PoolGone(l.node_pool.clone()))?;
    let class = view
        .classes
        .get(&pool.spec.template.spec.node_class_ref.name);
    let mut claim = claim::new_claim(pool, class.map(|c| c.as_ref()), l);
    if let Some(m) = claim.metadata.labels.as_mut() {
        m.extend(labels.clone());
    }
    if ctx.settings.node_overlay {
        let touched = crate::overlays::claim_annotations(view, pool, &l.instance_type_options);
        claim
            .metadata
            .annotations
            .get_or_insert_default()
            .extend(touched);
    }
    let c = ctx.cluster.create_node_claim(pool, claim).await?;
    ctx.metrics.count(
        NODECLAIMS_CREATED,
        &[("nodepool", &l.node_pool), ("reason", why.reason())],
        1.0,
    );
    ctx.log.info(
        PROVISIONER,
        "created nodeclaim",
        json!({"NodePool": obj(&l.node_pool), "NodeClaim": obj(claim::name(&c)),
               "requests": l.requests, "instance-types": abbreviate(&l.instance_type_options, 5)}),
    );
    Ok(c)
}
