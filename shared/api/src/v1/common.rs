//! Types shared by NodePool, NodeClaim and EC2NodeClass: requirements, taints, references,
//! conditions and resource lists.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A map from resource name (`cpu`, `memory`, `nodes`, ...) to quantity.
pub type ResourceList = BTreeMap<String, Quantity>;

/// Pattern of a qualified name (label key, taint key or value).
pub const QUALIFIED_NAME: &str = r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*(\/))?([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$";
/// Pattern of a label value.
pub const LABEL_VALUE: &str = r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$";
/// Pattern of `expireAfter` and `consolidateAfter`: a duration or `Never`.
pub const NILLABLE_DURATION: &str = r"^(([0-9]+(s|m|h))+|Never)$";
/// Pattern of `terminationGracePeriod`.
pub const DURATION: &str = r"^([0-9]+(s|m|h))+$";

/// Selector operators Karpenter accepts in requirements.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Hash, JsonSchema)]
pub enum Operator {
    /// The label's value is one of `values`.
    In,
    /// The label's value is none of `values` (or the label is absent).
    NotIn,
    /// The label is present.
    Exists,
    /// The label is absent.
    DoesNotExist,
    /// The label's value, an integer, is greater than the single value.
    Gt,
    /// The label's value, an integer, is less than the single value.
    Lt,
    /// Greater than or equal.
    Gte,
    /// Less than or equal.
    Lte,
}

/// A node selector requirement with an optional minimum number of distinct values.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct NodeSelectorRequirementWithMinValues {
    /// The label key that the selector applies to.
    #[schemars(length(max = 316), regex(pattern = QUALIFIED_NAME))]
    #[schemars(extend("x-kubernetes-validations" = [
        {"message": "label domain \"karpenter.sh\" is restricted",
         "rule": "self in [\"karpenter.sh/capacity-type\", \"karpenter.sh/nodepool\"] || !self.find(\"^([^/]+)\").endsWith(\"karpenter.sh\")"},
        {"message": "label \"kubernetes.io/hostname\" is restricted",
         "rule": "self != \"kubernetes.io/hostname\""}
    ]))]
    pub key: String,
    /// The key's relationship to `values`.
    pub operator: Operator,
    /// Values; one for Gt/Lt/Gte/Lte, none for Exists/DoesNotExist.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(inner(length(max = 63), regex(pattern = LABEL_VALUE)))]
    #[schemars(extend("x-kubernetes-list-type" = "atomic"))]
    pub values: Vec<String>,
    /// Minimum number of distinct values the launched capacity must keep flexible.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 50))]
    pub min_values: Option<i32>,
}

impl NodeSelectorRequirementWithMinValues {
    /// A requirement `key operator values` without minValues.
    pub fn new(key: impl Into<String>, operator: Operator, values: &[&str]) -> Self {
        Self {
            key: key.into(),
            operator,
            values: values.iter().map(|v| (*v).to_string()).collect(),
            min_values: None,
        }
    }
}

/// Taint effects.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Hash, JsonSchema)]
pub enum TaintEffect {
    /// Pods that do not tolerate the taint are not scheduled.
    NoSchedule,
    /// The scheduler tries to avoid the node.
    PreferNoSchedule,
    /// Pods that do not tolerate the taint are evicted.
    NoExecute,
}

impl TaintEffect {
    /// The effect as Kubernetes writes it on a Node's taint.
    pub fn as_str(self) -> &'static str {
        match self {
            TaintEffect::NoSchedule => "NoSchedule",
            TaintEffect::PreferNoSchedule => "PreferNoSchedule",
            TaintEffect::NoExecute => "NoExecute",
        }
    }
}

/// A node taint.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Taint {
    /// The taint key.
    #[schemars(length(min = 1), regex(pattern = QUALIFIED_NAME))]
    pub key: String,
    /// The taint value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = QUALIFIED_NAME))]
    pub value: Option<String>,
    /// The taint effect.
    pub effect: TaintEffect,
    /// When the taint was added (NoExecute taints only), RFC 3339.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("format" = "date-time"))]
    pub time_added: Option<String>,
}

impl Taint {
    /// A taint `key[=value]:effect`.
    pub fn new(key: impl Into<String>, value: Option<&str>, effect: TaintEffect) -> Self {
        Self {
            key: key.into(),
            value: value.map(str::to_string),
            effect,
            time_added: None,
        }
    }
}

/// A reference to the provider-specific node class.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, Default, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(extend("x-kubernetes-validations" = [
    {"message": "nodeClassRef.group is immutable", "rule": "self.group == oldSelf.group"},
    {"message": "nodeClassRef.kind is immutable", "rule": "self.kind == oldSelf.kind"}
]))]
pub struct NodeClassReference {
    /// Kind of the referent, e.g. `EC2NodeClass`.
    #[schemars(extend("x-kubernetes-validations" = [{"message": "kind may not be empty", "rule": "self != ''"}]))]
    pub kind: String,
    /// Name of the referent.
    #[schemars(extend("x-kubernetes-validations" = [{"message": "name may not be empty", "rule": "self != ''"}]))]
    pub name: String,
    /// API group of the referent, e.g. `karpenter.k8s.aws`.
    #[schemars(regex(pattern = r"^[^/]*$"))]
    #[schemars(extend("x-kubernetes-validations" = [{"message": "group may not be empty", "rule": "self != ''"}]))]
    pub group: String,
}

impl NodeClassReference {
    /// A reference to the EC2NodeClass `name`.
    pub fn ec2(name: impl Into<String>) -> Self {
        Self {
            kind: "EC2NodeClass".to_string(),
            name: name.into(),
            group: "karpenter.k8s.aws".to_string(),
        }
    }
}

/// A status condition's truth value.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Hash, JsonSchema)]
pub enum ConditionStatus {
    /// The condition holds.
    True,
    /// The condition does not hold.
    False,
    /// Not known yet.
    Unknown,
}

/// A status condition (the shape of `metav1.Condition`).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Condition {
    /// Condition type in CamelCase, e.g. `Ready`.
    #[serde(rename = "type")]
    #[schemars(length(max = 316))]
    #[schemars(regex(
        pattern = r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$"
    ))]
    pub type_: String,
    /// True, False or Unknown.
    pub status: ConditionStatus,
    /// The `.metadata.generation` the condition was set for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0))]
    pub observed_generation: Option<i64>,
    /// When the status last changed, RFC 3339.
    #[schemars(extend("format" = "date-time"))]
    pub last_transition_time: String,
    /// Machine-readable reason in CamelCase.
    #[schemars(
        length(max = 1024),
        regex(pattern = r"^([A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?|)$")
    )]
    pub reason: String,
    /// Human-readable message.
    #[schemars(length(max = 32768))]
    pub message: String,
}

/// Finds the condition of `type_` in `conditions`.
pub fn find_condition<'a>(conditions: &'a [Condition], type_: &str) -> Option<&'a Condition> {
    conditions.iter().find(|c| c.type_ == type_)
}

/// Whether the condition of `type_` is present and True.
pub fn is_condition_true(conditions: &[Condition], type_: &str) -> bool {
    find_condition(conditions, type_).is_some_and(|c| c.status == ConditionStatus::True)
}

/// The CEL rules Karpenter puts on a list of requirements.
pub fn requirement_rules() -> serde_json::Value {
    serde_json::json!([
        {"message": "requirements with operator 'In' must have a value defined",
         "rule": "self.all(x, x.operator == 'In' ? x.values.size() != 0 : true)"},
        {"message": "requirements operator 'Gt', 'Lt', 'Gte', or 'Lte' must have a single positive integer value",
         "rule": "self.all(x, (x.operator == 'Gt' || x.operator == 'Lt' || x.operator == 'Gte' || x.operator == 'Lte') ? (x.values.size() == 1 && int(x.values[0]) >= 0) : true)"},
        {"message": "requirements with 'minValues' must have at least that many values specified in the 'values' field",
         "rule": "self.all(x, (x.operator == 'In' && has(x.minValues)) ? x.values.size() >= x.minValues : true)"}
    ])
}

#[cfg(test)]
mod tests {
    use super::TaintEffect;

    #[test]
    fn a_taint_effect_is_written_as_it_is_serialized() {
        for e in [
            TaintEffect::NoSchedule,
            TaintEffect::PreferNoSchedule,
            TaintEffect::NoExecute,
        ] {
            assert_eq!(serde_json::to_value(e).unwrap(), e.as_str());
        }
    }
}
