//! `karpenter.sh/v1` NodeClaim: one requested node and what became of it.

use std::collections::BTreeMap;

use kube_derive::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::common::{
    Condition, DURATION, NILLABLE_DURATION, NodeClassReference,
    NodeSelectorRequirementWithMinValues, ResourceList, Taint,
};
use super::nodepool::default_expire_after;

/// The desired state of a NodeClaim (immutable once created).
// Clippy reads repeated `printcolumn(type_ = …)` arguments as duplicated attributes.
#[allow(clippy::duplicated_attributes)]
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[kube(
    group = "karpenter.sh",
    version = "v1",
    kind = "NodeClaim",
    plural = "nodeclaims",
    singular = "nodeclaim",
    category = "karpenter",
    derive = "PartialEq",
    status = "NodeClaimStatus",
    printcolumn(
        name = "Type",
        type_ = "string",
        json_path = r".metadata.labels.node\.kubernetes\.io/instance-type"
    ),
    printcolumn(
        name = "Capacity",
        type_ = "string",
        json_path = r".metadata.labels.karpenter\.sh/capacity-type"
    ),
    printcolumn(
        name = "Zone",
        type_ = "string",
        json_path = r".metadata.labels.topology\.kubernetes\.io/zone"
    ),
    printcolumn(name = "Node", type_ = "string", json_path = ".status.nodeName"),
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
        name = "ImageID",
        type_ = "string",
        json_path = ".status.imageID",
        priority = 1
    ),
    printcolumn(
        name = "ID",
        type_ = "string",
        json_path = ".status.providerID",
        priority = 1
    ),
    printcolumn(
        name = "NodePool",
        type_ = "string",
        json_path = r".metadata.labels.karpenter\.sh/nodepool",
        priority = 1
    ),
    printcolumn(
        name = "NodeClass",
        type_ = "string",
        json_path = ".spec.nodeClassRef.name",
        priority = 1
    ),
    printcolumn(
        name = "Drifted",
        type_ = "string",
        json_path = r#".status.conditions[?(@.type=="Drifted")].status"#,
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
#[schemars(extend("x-kubernetes-validations" = [{"message": "spec is immutable", "rule": "self == oldSelf"}]))]
pub struct NodeClaimSpec {
    /// Taints applied to the node.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(extend("x-kubernetes-list-type" = "atomic"))]
    pub taints: Vec<Taint>,
    /// Taints applied at registration and expected to be removed by something else.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(extend("x-kubernetes-list-type" = "atomic"))]
    pub startup_taints: Vec<Taint>,
    /// Requirements the launched instance satisfies.
    #[schemars(length(max = 100), extend("x-kubernetes-list-type" = "atomic"))]
    #[schemars(extend("x-kubernetes-validations" = crate::v1::common::requirement_rules()))]
    pub requirements: Vec<NodeSelectorRequirementWithMinValues>,
    /// Resources the node must provide (scheduled pods plus daemonset overhead).
    #[serde(default, skip_serializing_if = "ResourceRequirements::is_empty")]
    pub resources: ResourceRequirements,
    /// The provider node class.
    pub node_class_ref: NodeClassReference,
    /// Maximum drain time once the NodeClaim is deleted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = DURATION))]
    pub termination_grace_period: Option<String>,
    /// Lifetime before the node is replaced, or `Never`.
    #[serde(default = "default_expire_after")]
    #[schemars(regex(pattern = NILLABLE_DURATION))]
    pub expire_after: String,
}

/// Resource requests of a NodeClaim.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ResourceRequirements {
    /// Minimum resources the node must have.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub requests: ResourceList,
}

impl ResourceRequirements {
    /// Whether no request is set.
    pub fn is_empty(&self) -> bool {
        self.requests.is_empty()
    }
}

/// The observed state of a NodeClaim.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct NodeClaimStatus {
    /// Name of the Node that registered for this claim.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_name: Option<String>,
    /// Provider ID of the instance, e.g. `aws:///us-west-2a/i-0123…`.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        rename = "providerID"
    )]
    pub provider_id: Option<String>,
    /// Image the instance was launched from.
    #[serde(default, skip_serializing_if = "Option::is_none", rename = "imageID")]
    pub image_id: Option<String>,
    /// Estimated capacity of the node.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub capacity: ResourceList,
    /// Estimated allocatable resources of the node.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub allocatable: ResourceList,
    /// Launched, Registered, Initialized, Ready, Consolidatable, Drifted, ...
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(extend("x-kubernetes-list-type" = "map", "x-kubernetes-list-map-keys" = ["type"]))]
    pub conditions: Vec<Condition>,
    /// Last time a pod was bound to or left the node (RFC 3339).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("format" = "date-time"))]
    pub last_pod_event_time: Option<String>,
}
