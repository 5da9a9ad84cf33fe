//! `karpenter.sh/v1alpha1` NodeOverlay: what the scheduler should believe about the instance
//! types and offerings its requirements select — their price and extra extended resources.

use kube_derive::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::v1::{Condition, NodeSelectorRequirementWithMinValues, ResourceList};

/// What `priceAdjustment` may be: a signed amount, a rise in percent, or a cut of less than
/// 100% (or exactly 100%), as Karpenter's CRD writes it.
const PRICE_ADJUSTMENT: &str =
    r"^(([+-]{1}(\d*\.?\d+))|(\+{1}\d*\.?\d+%)|(^(-\d{1,2}(\.\d+)?%)$)|(-100%))$";

/// The desired state of a NodeOverlay.
// Clippy reads repeated `printcolumn(type_ = …)` arguments as duplicated attributes.
#[allow(clippy::duplicated_attributes)]
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "karpenter.sh",
    version = "v1alpha1",
    kind = "NodeOverlay",
    plural = "nodeoverlays",
    singular = "nodeoverlay",
    shortname = "overlays",
    category = "karpenter",
    derive = "PartialEq",
    status = "NodeOverlayStatus",
    printcolumn(
        name = "Ready",
        type_ = "string",
        json_path = r#".status.conditions[?(@.type=="Ready")].status"#
    ),
    printcolumn(
        name = "Age",
        type_ = "date",
        json_path = ".metadata.creationTimestamp"
    ),
    printcolumn(
        name = "Weight",
        type_ = "integer",
        json_path = ".spec.weight",
        priority = 1
    ),
    crates(
        kube_core = "::kube_core",
        k8s_openapi = "::k8s_openapi",
        schemars = "::schemars",
        serde = "::serde",
        serde_json = "::serde_json"
    )
)]
#[serde(rename_all = "camelCase")]
#[schemars(extend("x-kubernetes-validations" = [
    {"message": "cannot set both 'price' and 'priceAdjustment'",
     "rule": "!has(self.price) || !has(self.priceAdjustment)"}
]))]
pub struct NodeOverlaySpec {
    /// The instance types and offerings it applies to (empty: every one).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 100), extend("x-kubernetes-list-type" = "atomic"))]
    #[schemars(extend("x-kubernetes-validations" = crate::v1::common::requirement_rules()))]
    pub requirements: Vec<NodeSelectorRequirementWithMinValues>,
    /// The offerings' price, a decimal (exclusive with `priceAdjustment`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = r"^\d+(\.\d+)?$"))]
    pub price: Option<String>,
    /// A change of the offerings' price: `+5.00`, `-7.50`, `-10%`, `+15%`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = PRICE_ADJUSTMENT))]
    pub price_adjustment: Option<String>,
    /// Extended resources the selected instance types provide.
    #[serde(default, skip_serializing_if = "ResourceList::is_empty")]
    #[schemars(extend("x-kubernetes-validations" = [
        {"message": "invalid resource restricted",
         "rule": "self.all(x, !(x in ['cpu', 'memory', 'ephemeral-storage', 'pods']))"}
    ]))]
    pub capacity: ResourceList,
    /// Precedence among overlays selecting the same offering (higher wins).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 10000))]
    pub weight: Option<i32>,
}

/// What Karpenter reports of a NodeOverlay.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct NodeOverlayStatus {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
}
