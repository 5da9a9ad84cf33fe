//! List and object shapes for field ownership: whether a list is atomic, a set or keyed
//! (`x-kubernetes-list-type` / `x-kubernetes-list-map-keys`), and whether an object is
//! atomic (`x-kubernetes-map-type: atomic`).
//!
//! Custom resources answer from their OpenAPI schema (lists without a list type are atomic,
//! as in the apiserver). `metadata` and built-in kinds answer from a small table that
//! follows the Kubernetes OpenAPI for the fields Kerf and its users touch: containers,
//! volumes and env by `name`, container ports by `containerPort`+`protocol`, conditions and
//! node addresses by `type`, ownerReferences by `uid`, finalizers and podCIDRs as sets,
//! label selectors as atomic objects; every other list (taints, tolerations, ...) is atomic.

use crate::registry::ResourceInfo;
use serde_json::{Map, Value};

/// The step a walk takes into a list item (field names are the other steps).
pub const ITEM: &str = "[]";

/// How a list merges and how its items are named.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ListKind {
    /// Replaced and owned as a whole.
    Atomic,
    /// Scalar items, each owned on its own (`v:<json>`).
    Set,
    /// Object items named by these keys (`k:{...}`).
    Map(Vec<String>),
}

/// Shape lookups for one resource type.
#[derive(Debug, Clone, Copy)]
pub struct Shapes<'a> {
    schema: Option<&'a Value>,
}

/// Where a schema walk ended.
enum Lookup<'a> {
    /// Built-in rules apply (built-in kinds, or `metadata` of any kind).
    Builtin,
    /// The schema node of a custom resource field.
    Node(&'a Value),
    /// A custom resource field the schema does not describe.
    Unknown,
}

impl<'a> Shapes<'a> {
    /// Shapes for a resource: `schema` is the custom resource's OpenAPI schema, if any.
    pub fn new(schema: Option<&'a Value>) -> Self {
        Self { schema }
    }

    /// Shapes for a served resource.
    pub fn of(res: &'a ResourceInfo) -> Self {
        Self::new(res.schema.as_ref())
    }

    /// The kind of the list reached by `steps` (field names and [`ITEM`]s).
    pub fn list(&self, steps: &[&str]) -> ListKind {
        match self.lookup(steps) {
            Lookup::Builtin => builtin_list(steps),
            Lookup::Node(node) => schema_list(node),
            Lookup::Unknown => ListKind::Atomic,
        }
    }

    /// Whether the object reached by `steps` is owned as a whole.
    pub fn atomic_object(&self, steps: &[&str]) -> bool {
        match self.lookup(steps) {
            Lookup::Builtin => builtin_atomic_object(steps),
            Lookup::Node(node) => node["x-kubernetes-map-type"] == "atomic",
            Lookup::Unknown => false,
        }
    }

    fn lookup(&self, steps: &[&str]) -> Lookup<'a> {
        let Some(mut node) = self.schema else {
            return Lookup::Builtin;
        };
        if steps.first() == Some(&"metadata") {
            return Lookup::Builtin;
        }
        for step in steps {
            let next = if *step == ITEM {
                node.get("items")
            } else {
                node["properties"]
                    .get(*step)
                    .or_else(|| node.get("additionalProperties").filter(|a| a.is_object()))
            };
            match next {
                Some(n) => node = n,
                None => return Lookup::Unknown,
            }
        }
        Lookup::Node(node)
    }
}

fn schema_list(node: &Value) -> ListKind {
    match node["x-kubernetes-list-type"].as_str() {
        Some("set") => ListKind::Set,
        Some("map") => {
            let keys = node["x-kubernetes-list-map-keys"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect();
            ListKind::Map(keys)
        }
        _ => ListKind::Atomic,
    }
}

fn keyed(keys: &[&str]) -> ListKind {
    ListKind::Map(keys.iter().map(|k| k.to_string()).collect())
}

fn builtin_list(steps: &[&str]) -> ListKind {
    let n = steps.len();
    let last = steps.last().copied().unwrap_or_default();
    let parent = if n >= 2 { steps[n - 2] } else { "" };
    match (parent, last) {
        ("metadata", "finalizers") | ("spec", "podCIDRs") => ListKind::Set,
        ("metadata", "ownerReferences") => keyed(&["uid"]),
        (_, "conditions") | ("status", "addresses") => keyed(&["type"]),
        ("spec", "containers" | "initContainers" | "ephemeralContainers")
        | ("spec", "volumes" | "imagePullSecrets" | "schedulingGates" | "resourceClaims")
        | (ITEM, "env") => keyed(&["name"]),
        (ITEM, "ports") => keyed(&["containerPort", "protocol"]),
        (ITEM, "volumeMounts") => keyed(&["mountPath"]),
        (ITEM, "volumeDevices") => keyed(&["devicePath"]),
        ("spec", "topologySpreadConstraints") => keyed(&["topologyKey", "whenUnsatisfiable"]),
        ("spec", "hostAliases") | ("status", "podIPs" | "hostIPs") => keyed(&["ip"]),
        _ => ListKind::Atomic,
    }
}

fn builtin_atomic_object(steps: &[&str]) -> bool {
    let last = steps.last().copied().unwrap_or_default();
    steps.first() != Some(&"metadata")
        && matches!(
            last,
            "selector"
                | "labelSelector"
                | "namespaceSelector"
                | "requiredDuringSchedulingIgnoredDuringExecution"
        )
}

/// The encoded path element naming `item` in a list of `kind` (`None` for atomic lists).
pub fn item_element(kind: &ListKind, item: &Value) -> Option<String> {
    match kind {
        ListKind::Atomic => None,
        ListKind::Set => Some(format!("v:{item}")),
        ListKind::Map(keys) => {
            let named: Map<String, Value> = keys
                .iter()
                .filter_map(|k| item.get(k).map(|v| (k.clone(), v.clone())))
                .collect();
            Some(format!("k:{}", Value::Object(named)))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn builtin_table() {
        let s = Shapes::new(None);
        assert_eq!(
            s.list(&["spec", "containers"]),
            ListKind::Map(vec!["name".into()])
        );
        assert_eq!(s.list(&["metadata", "finalizers"]), ListKind::Set);
        assert_eq!(s.list(&["spec", "taints"]), ListKind::Atomic);
        assert_eq!(
            s.list(&["spec", "containers", ITEM, "ports"]),
            ListKind::Map(vec!["containerPort".into(), "protocol".into()])
        );
        assert!(s.atomic_object(&["spec", "selector"]));
        let item = json!({"protocol": "TCP", "containerPort": 80, "name": "http"});
        let kind = s.list(&["spec", "containers", ITEM, "ports"]);
        assert_eq!(
            item_element(&kind, &item).as_deref(),
            Some("k:{\"containerPort\":80,\"protocol\":\"TCP\"}")
        );
        assert_eq!(
            item_element(&ListKind::Set, &json!("a")).as_deref(),
            Some("v:\"a\"")
        );
    }

    #[test]
    fn schema_annotations() {
        let schema = json!({"properties": {
            "spec": {"properties": {
                "reqs": {"type": "array", "x-kubernetes-list-type": "atomic"},
                "plain": {"type": "array"},
                "ref": {"type": "object", "x-kubernetes-map-type": "atomic"}}},
            "status": {"properties": {"conditions": {"type": "array",
                "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["type"]}}}}});
        let s = Shapes::new(Some(&schema));
        assert_eq!(s.list(&["spec", "reqs"]), ListKind::Atomic);
        assert_eq!(s.list(&["spec", "plain"]), ListKind::Atomic);
        assert_eq!(s.list(&["spec", "nope"]), ListKind::Atomic);
        assert_eq!(
            s.list(&["status", "conditions"]),
            ListKind::Map(vec!["type".into()])
        );
        assert_eq!(s.list(&["metadata", "finalizers"]), ListKind::Set);
        assert!(s.atomic_object(&["spec", "ref"]));
        assert!(!s.atomic_object(&["spec"]));
    }
}
