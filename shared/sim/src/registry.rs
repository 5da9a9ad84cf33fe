//! The resource table: which group/version/plural the server serves, and how.
//!
//! Adding a resource is one entry here (or one CRD passed to [`Registry::add_crd`]).

use crate::error::ResName;
use serde_json::Value;

/// How one resource type behaves.
#[derive(Debug, Clone)]
pub struct ResourceInfo {
    /// API group, empty for core.
    pub group: String,
    /// Version, e.g. `v1`.
    pub version: String,
    /// Plural, e.g. `pods`.
    pub plural: String,
    /// Kind, e.g. `Pod`.
    pub kind: String,
    /// Namespaced or cluster-scoped.
    pub namespaced: bool,
    /// Has a `/status` subresource (main endpoint ignores `.status`).
    pub status_subresource: bool,
    /// `metadata.generation` is bumped on non-metadata/status changes.
    pub generation: bool,
    /// A custom resource (strategic merge → 415, empty resourceVersion on PUT → 422).
    pub custom: bool,
    /// Field selectors supported besides `metadata.name`/`metadata.namespace`.
    pub fields: &'static [&'static str],
    /// OpenAPI v3 schema for custom resources.
    pub schema: Option<Value>,
    /// What `kubectl get` also accepts (`po`, `deploy`, a CRD's `names.shortNames`).
    pub short_names: Vec<String>,
    /// A custom resource version's `additionalPrinterColumns` (server-side `kubectl get`).
    pub printer_columns: Vec<Value>,
}

/// kube-apiserver's short names for the built-in resources served here.
fn builtin_short_names(group: &str, plural: &str) -> &'static [&'static str] {
    match (group, plural) {
        ("", "pods") => &["po"],
        ("", "nodes") => &["no"],
        ("", "events") | ("events.k8s.io", "events") => &["ev"],
        ("", "namespaces") => &["ns"],
        ("", "configmaps") => &["cm"],
        ("apps", "daemonsets") => &["ds"],
        ("apps", "deployments") => &["deploy"],
        ("apps", "replicasets") => &["rs"],
        ("apps", "statefulsets") => &["sts"],
        ("", "persistentvolumes") => &["pv"],
        ("", "persistentvolumeclaims") => &["pvc"],
        ("storage.k8s.io", "storageclasses") => &["sc"],
        ("policy", "poddisruptionbudgets") => &["pdb"],
        _ => &[],
    }
}

impl ResourceInfo {
    /// Error-message name of the resource.
    pub fn res_name(&self) -> ResName {
        ResName {
            plural: self.plural.clone(),
            group: self.group.clone(),
        }
    }

    /// `apiVersion` of objects of this resource.
    pub fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.version.clone()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }
}

const POD_FIELDS: &[&str] = &[
    "spec.nodeName",
    "spec.restartPolicy",
    "spec.schedulerName",
    "spec.serviceAccountName",
    "spec.hostNetwork",
    "status.phase",
    "status.podIP",
    "status.nominatedNodeName",
];
const EVENT_FIELDS: &[&str] = &[
    "involvedObject.kind",
    "involvedObject.namespace",
    "involvedObject.name",
    "involvedObject.uid",
    "involvedObject.apiVersion",
    "involvedObject.resourceVersion",
    "involvedObject.fieldPath",
    "reason",
    "reportingComponent",
    "source",
    "type",
];

/// All resources the server knows.
#[derive(Debug, Clone, Default)]
pub struct Registry {
    items: Vec<ResourceInfo>,
}

/// Builder shorthand for a built-in resource.
struct B(
    &'static str,
    &'static str,
    &'static str,
    &'static str,
    bool,
    bool,
    bool,
);

impl Registry {
    /// The built-in Kubernetes resources Kerf uses.
    pub fn builtin() -> Self {
        let table = [
            B("", "pods", "Pod", "v1", true, true, false),
            B("", "nodes", "Node", "v1", false, true, false),
            B("", "events", "Event", "v1", true, false, false),
            B("", "namespaces", "Namespace", "v1", false, true, false),
            B("", "configmaps", "ConfigMap", "v1", true, false, false),
            B("apps", "daemonsets", "DaemonSet", "v1", true, true, true),
            B("apps", "deployments", "Deployment", "v1", true, true, true),
            B("apps", "replicasets", "ReplicaSet", "v1", true, true, true),
            B(
                "apps",
                "statefulsets",
                "StatefulSet",
                "v1",
                true,
                true,
                true,
            ),
            B(
                "",
                "persistentvolumes",
                "PersistentVolume",
                "v1",
                false,
                true,
                false,
            ),
            B(
                "",
                "persistentvolumeclaims",
                "PersistentVolumeClaim",
                "v1",
                true,
                true,
                false,
            ),
            B(
                "storage.k8s.io",
                "storageclasses",
                "StorageClass",
                "v1",
                false,
                false,
                false,
            ),
            B(
                "storage.k8s.io",
                "csinodes",
                "CSINode",
                "v1",
                false,
                false,
                false,
            ),
            B(
                "storage.k8s.io",
                "volumeattachments",
                "VolumeAttachment",
                "v1",
                false,
                true,
                false,
            ),
            B(
                "policy",
                "poddisruptionbudgets",
                "PodDisruptionBudget",
                "v1",
                true,
                true,
                true,
            ),
            B(
                "coordination.k8s.io",
                "leases",
                "Lease",
                "v1",
                true,
                false,
                false,
            ),
            B("events.k8s.io", "events", "Event", "v1", true, false, false),
        ];
        let items = table.into_iter().map(Self::builtin_entry).collect();
        Self { items }
    }

    fn builtin_entry(b: B) -> ResourceInfo {
        let fields: &'static [&'static str] = match (b.0, b.1) {
            ("", "pods") => POD_FIELDS,
            ("", "nodes") => &["spec.unschedulable"],
            ("", "events") => EVENT_FIELDS,
            ("", "namespaces") => &["status.phase"],
            _ => &[],
        };
        ResourceInfo {
            group: b.0.into(),
            plural: b.1.into(),
            kind: b.2.into(),
            version: b.3.into(),
            namespaced: b.4,
            status_subresource: b.5,
            generation: b.6,
            custom: false,
            fields,
            schema: None,
            short_names: builtin_short_names(b.0, b.1)
                .iter()
                .map(|s| s.to_string())
                .collect(),
            printer_columns: Vec::new(),
        }
    }

    /// Registers every served version of a CustomResourceDefinition (JSON form).
    pub fn add_crd(&mut self, crd: &Value) {
        let spec = &crd["spec"];
        let group = spec["group"].as_str().unwrap_or_default().to_string();
        let plural = spec["names"]["plural"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        let kind = spec["names"]["kind"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        let namespaced = spec["scope"].as_str() == Some("Namespaced");
        for v in spec["versions"].as_array().into_iter().flatten() {
            if v["served"].as_bool() == Some(false) {
                continue;
            }
            self.items.push(ResourceInfo {
                group: group.clone(),
                version: v["name"].as_str().unwrap_or_default().to_string(),
                plural: plural.clone(),
                kind: kind.clone(),
                namespaced,
                status_subresource: v["subresources"]["status"].is_object(),
                generation: true,
                custom: true,
                fields: &[],
                schema: v["schema"].get("openAPIV3Schema").cloned(),
                short_names: spec["names"]["shortNames"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|s| s.as_str().map(str::to_string))
                    .collect(),
                printer_columns: v["additionalPrinterColumns"]
                    .as_array()
                    .cloned()
                    .unwrap_or_default(),
            });
        }
    }

    /// Looks a resource up by group, version and plural; returns its index.
    pub fn find(&self, group: &str, version: &str, plural: &str) -> Option<usize> {
        self.items
            .iter()
            .position(|r| r.group == group && r.version == version && r.plural == plural)
    }

    /// The resource at an index returned by [`Registry::find`].
    pub fn get(&self, idx: usize) -> Option<&ResourceInfo> {
        self.items.get(idx)
    }

    /// All resources (for discovery).
    pub fn all(&self) -> &[ResourceInfo] {
        &self.items
    }
}
