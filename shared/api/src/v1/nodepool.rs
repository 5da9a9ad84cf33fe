//! `karpenter.sh/v1` NodePool: the template and constraints for the nodes Kerf launches.

use std::collections::BTreeMap;

use kube_derive::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::common::{
    Condition, DURATION, NILLABLE_DURATION, NodeClassReference,
    NodeSelectorRequirementWithMinValues, ResourceList, Taint,
};
use super::disruption::Disruption;

/// The desired state of a NodePool.
// Clippy reads repeated `printcolumn(type_ = …)` arguments as duplicated attributes.
#[allow(clippy::duplicated_attributes)]
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[kube(
    group = "karpenter.sh",
    version = "v1",
    kind = "NodePool",
    plural = "nodepools",
    singular = "nodepool",
    category = "karpenter",
    derive = "PartialEq",
    status = "NodePoolStatus",
    scale(
        spec_replicas_path = ".spec.replicas",
        status_replicas_path = ".status.nodes"
    ),
    printcolumn(
        name = "NodeClass",
        type_ = "string",
        json_path = ".spec.template.spec.nodeClassRef.name"
    ),
    printcolumn(name = "Nodes", type_ = "string", json_path = ".status.nodes"),
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
    printcolumn(
        name = "CPU",
        type_ = "string",
        json_path = ".status.resources.cpu",
        priority = 1
    ),
    printcolumn(
        name = "Memory",
        type_ = "string",
        json_path = ".status.resources.memory",
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
    {"message": "Cannot transition NodePool between static (replicas set) and dynamic (replicas unset) provisioning modes",
     "rule": "has(self.replicas) == has(oldSelf.replicas)"},
    {"message": "only 'limits.nodes' is supported on static NodePools",
     "rule": "!has(self.replicas) || (!has(self.limits) || size(self.limits) == 0 || (size(self.limits) == 1 && 'nodes' in self.limits))"},
    {"message": "'weight' is not supported on static NodePools",
     "rule": "!has(self.replicas) || !has(self.weight)"}
]))]
pub struct NodePoolSpec {
    /// The template NodeClaims launched from this pool are made from.
    pub template: NodeClaimTemplate,
    /// How and when nodes of this pool may be disrupted.
    #[serde(default)]
    pub disruption: Disruption,
    /// Upper bounds on the summed capacity of the pool's nodes.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub limits: ResourceList,
    /// Priority among pools: higher is tried first (1..100).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 100))]
    pub weight: Option<i32>,
    /// Static node count (alpha); its presence makes the pool static.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0))]
    pub replicas: Option<i64>,
}

/// The NodeClaim template inside a NodePool.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct NodeClaimTemplate {
    /// Labels and annotations for the NodeClaims and Nodes.
    #[serde(default, skip_serializing_if = "TemplateMetadata::is_empty")]
    pub metadata: TemplateMetadata,
    /// The NodeClaim spec.
    pub spec: NodeClaimTemplateSpec,
}

/// Labels and annotations copied to NodeClaims and Nodes.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TemplateMetadata {
    /// Labels applied to every node; they also act as `In` requirements.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    #[schemars(extend(
        "maxProperties" = 100,
        "additionalProperties" = {"type": "string", "maxLength": 63, "pattern": super::common::LABEL_VALUE},
        "x-kubernetes-map-type" = "atomic"
    ))]
    #[schemars(extend("x-kubernetes-validations" = [
        {"message": "label domain \"karpenter.sh\" is restricted",
         "rule": "self.all(x, x in [\"karpenter.sh/capacity-type\", \"karpenter.sh/nodepool\"] || !x.find(\"^([^/]+)\").endsWith(\"karpenter.sh\"))"},
        {"message": "label \"karpenter.sh/nodepool\" is restricted",
         "rule": "self.all(x, x != \"karpenter.sh/nodepool\")"},
        {"message": "label \"kubernetes.io/hostname\" is restricted",
         "rule": "self.all(x, x != \"kubernetes.io/hostname\")"}
    ]))]
    pub labels: BTreeMap<String, String>,
    /// Annotations applied to every node.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub annotations: BTreeMap<String, String>,
}

impl TemplateMetadata {
    /// Whether there are neither labels nor annotations.
    pub fn is_empty(&self) -> bool {
        self.labels.is_empty() && self.annotations.is_empty()
    }
}

/// The spec part of a NodePool's NodeClaim template.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct NodeClaimTemplateSpec {
    /// Taints applied to every node.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(extend("x-kubernetes-list-type" = "atomic"))]
    pub taints: Vec<Taint>,
    /// Taints applied at registration and expected to be removed by something else.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(extend("x-kubernetes-list-type" = "atomic"))]
    pub startup_taints: Vec<Taint>,
    /// Scheduling requirements every node satisfies.
    #[schemars(length(max = 100), extend("x-kubernetes-list-type" = "atomic"))]
    #[schemars(extend("x-kubernetes-validations" = crate::v1::common::requirement_rules()))]
    pub requirements: Vec<NodeSelectorRequirementWithMinValues>,
    /// The provider node class.
    pub node_class_ref: NodeClassReference,
    /// Maximum drain time once a NodeClaim is deleted; unset waits forever.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = DURATION))]
    pub termination_grace_period: Option<String>,
    /// Lifetime of a node (from creation) before it is replaced, or `Never`.
    #[serde(default = "default_expire_after")]
    #[schemars(regex(pattern = NILLABLE_DURATION))]
    pub expire_after: String,
}

/// Karpenter's default `expireAfter`: 30 days.
pub fn default_expire_after() -> String {
    "720h".to_string()
}

/// The observed state of a NodePool.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct NodePoolStatus {
    /// Summed capacity of the pool's nodes.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub resources: ResourceList,
    /// Number of nodes in the pool.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = 0))]
    pub nodes: Option<i64>,
    /// The node class generation the registration health was observed at.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_class_observed_generation: Option<i64>,
    /// Ready, ValidationSucceeded, NodeClassReady, NodeRegistrationHealthy.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(extend("x-kubernetes-list-type" = "map", "x-kubernetes-list-map-keys" = ["type"]))]
    pub conditions: Vec<Condition>,
}
