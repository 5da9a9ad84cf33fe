//! The schemas of the built-in kinds the server serves, as kube-apiserver publishes them:
//! `shared/sim/openapi/builtin.json`, written by `scripts/gen-openapi.py` from the
//! `api/openapi-spec` of the Kubernetes release the project's control plane is pinned to.
//! It holds the Swagger 2.0 definitions and the OpenAPI 3.0 component schemas of those kinds
//! and of everything they reference, and which schemas each group-version's document holds.
//! It is parsed once, when an OpenAPI document is first asked for.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use serde::Deserialize;
use serde_json::{Map, Value};

use crate::registry::ResourceInfo;

/// The generated file.
const JSON: &str = include_str!("../../openapi/builtin.json");

/// ObjectMeta's definition name.
pub const OBJECT_META: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta";

/// What a custom kind's `metadata` field says, as kube-apiserver writes it.
pub const METADATA_DESCRIPTION: &str = "Standard object's metadata. More info: \
    https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata";

/// The generated file does not parse (it is committed; a unit test parses it).
#[derive(Debug, Clone, thiserror::Error)]
#[error("the built-in kinds' OpenAPI schemas do not parse: {0}")]
pub struct DataError(String);

/// The built-in kinds' schemas.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Builtin {
    /// The Kubernetes version they are from (`v1.36.3`).
    pub version: String,
    /// Swagger 2.0 definitions by name.
    v2: Map<String, Value>,
    /// OpenAPI 3.0 component schemas by name.
    v3: Map<String, Value>,
    /// Per group-version (`api/v1`, `apis/apps/v1`), the names of its document's schemas.
    group_versions: BTreeMap<String, Vec<String>>,
    /// ObjectMeta and the definitions it references.
    object_meta: Vec<String>,
}

/// The schemas, parsed on first use.
pub fn data() -> Result<&'static Builtin, DataError> {
    static DATA: OnceLock<Result<Builtin, DataError>> = OnceLock::new();
    DATA.get_or_init(|| serde_json::from_str(JSON).map_err(|e| DataError(e.to_string())))
        .as_ref()
        .map_err(Clone::clone)
}

/// A resource's group-version as `/openapi/v3` lists it: `api/v1`, `apis/apps/v1`.
pub fn group_version(r: &ResourceInfo) -> String {
    if r.group.is_empty() {
        format!("api/{}", r.version)
    } else {
        format!("apis/{}/{}", r.group, r.version)
    }
}

impl Builtin {
    /// Every v2 definition: the served kinds, ObjectMeta and what they reference.
    pub fn v2_definitions(&self) -> &Map<String, Value> {
        &self.v2
    }

    /// The component schemas of a built-in group-version's document.
    pub fn v3_schemas(&self, gv: &str) -> Option<Map<String, Value>> {
        self.group_versions.get(gv).map(|names| self.pick(names))
    }

    /// ObjectMeta and what it references, as v3 component schemas (for the documents of the
    /// custom resources' group-versions).
    pub fn v3_object_meta(&self) -> Map<String, Value> {
        self.pick(&self.object_meta)
    }

    fn pick(&self, names: &[String]) -> Map<String, Value> {
        names
            .iter()
            .filter_map(|n| self.v3.get(n).map(|s| (n.clone(), s.clone())))
            .collect()
    }

    /// Whether a built-in resource's kind has a schema: a definition tagged with its
    /// group, version and kind.
    pub fn describes(&self, r: &ResourceInfo) -> bool {
        self.v2.values().any(|d| tags(d, r))
    }

    /// The v3 schema of a built-in resource's kind.
    pub fn kind_schema(&self, r: &ResourceInfo) -> Option<&Value> {
        self.v3.values().find(|s| tags(s, r))
    }

    /// The schema a v3 schema stands for: the one it references (`$ref`, or `allOf` with one
    /// reference, as v3 wraps a reference that has a description or a default), or itself.
    pub fn resolve<'a>(&'a self, s: &'a Value) -> &'a Value {
        let target = s["$ref"]
            .as_str()
            .or_else(|| s["allOf"][0]["$ref"].as_str())
            .and_then(|r| r.strip_prefix("#/components/schemas/"))
            .and_then(|name| self.v3.get(name));
        target.map_or(s, |t| self.resolve(t))
    }
}

/// Whether a definition is tagged with the resource's group, version and kind.
fn tags(definition: &Value, r: &ResourceInfo) -> bool {
    definition["x-kubernetes-group-version-kind"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|g| g["group"] == r.group && g["version"] == r.version && g["kind"] == r.kind)
}
