//! `karpenter.sh/v1alpha1` NodeOverlay: what the scheduler should believe about the instance
//! types and offerings its requirements select — their price and extra extended resources.

use kube_derive::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::v1::{Condition, NodeSelectorRequirementWithMinValues, ResourceList};

/// The desired state of a NodeOverlay.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "karpenter.sh",
    version = "v1alpha1",
    kind = "NodeOverlay",
    plural = "nodeoverlays",
    singular = "nodeoverlay",
    category = "karpenter",
    derive = "PartialEq",
    status = "NodeOverlayStatus",
    crates(
        kube_core = "::kube_core",
        k8s_openapi = "::k8s_openapi",
        schemars = "::schemars",
        serde = "::serde",
        serde_json = "::serde_json"
    )
)]
#[serde(rename_all = "camelCase")]
pub struct NodeOverlaySpec {
    /// The instance types and offerings it applies to (empty: every one).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub requirements: Vec<NodeSelectorRequirementWithMinValues>,
    /// The offerings' price, a decimal (exclusive with `priceAdjustment`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub price: Option<String>,
    /// A change of the offerings' price: `+5.00`, `-7.50`, `-10%`, `+15%`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub price_adjustment: Option<String>,
    /// Extended resources the selected instance types provide.
    #[serde(default, skip_serializing_if = "ResourceList::is_empty")]
    pub capacity: ResourceList,
    /// Precedence among overlays selecting the same offering (higher wins).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub weight: Option<i32>,
}

/// What Karpenter reports of a NodeOverlay.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct NodeOverlayStatus {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
}
