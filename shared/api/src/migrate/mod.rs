//! Migration of legacy Karpenter documents (v1alpha5 Provisioner, v1alpha1 AWSNodeTemplate,
//! v1beta1 NodePool / EC2NodeClass) to v1 YAML, with a warning for everything v1 cannot say.

mod named;
mod nodeclass;
mod nodepool;
pub mod selectors;

use serde::Deserialize;
use serde_json::Value;

use crate::ApiError;
use crate::v1::{EC2NodeClass, KubeletConfiguration, NodePool};

/// The result of a migration: v1 YAML and what could not be carried over.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MigrateOutput {
    /// Multi-document v1 YAML.
    pub yaml: String,
    /// One line per dropped or guessed field, naming the object and field.
    pub warnings: Vec<String>,
}

/// A migrated document.
#[derive(Debug, Clone)]
enum Doc {
    NodePool(Box<NodePool>),
    NodeClass(Box<EC2NodeClass>),
    Raw(Value),
}

/// Kubelet settings found on a pool that belong on the node class it references.
#[derive(Debug, Clone)]
struct KubeletMove {
    node_class: String,
    kubelet: KubeletConfiguration,
    source: String,
}

/// State shared by the converters of one input.
#[derive(Debug, Default)]
struct Ctx {
    warnings: Vec<String>,
    kubelets: Vec<KubeletMove>,
    /// Instance types the input's pods select outright.
    pod_types: std::collections::BTreeSet<String>,
}

impl Ctx {
    fn warn(&mut self, object: &str, message: impl AsRef<str>) {
        self.warnings
            .push(format!("{object}: {}", message.as_ref()));
    }
}

/// Converts every document of `yaml_text` to Karpenter v1.
///
/// Provisioners become NodePools (and an EC2NodeClass for an inline `provider`),
/// AWSNodeTemplates and v1beta1 EC2NodeClasses become v1 EC2NodeClasses, v1beta1 NodePools
/// become v1 NodePools; kubelet settings move to the referenced EC2NodeClass. v1 documents pass
/// through; other kinds pass through unchanged with a warning, except other clouds' node
/// classes (AKSNodeClass, ...), which are an error naming the object and kind.
pub fn migrate_documents(yaml_text: &str) -> Result<MigrateOutput, ApiError> {
    let mut ctx = Ctx::default();
    let mut items = Vec::new();
    for document in yaml_serde::Deserializer::from_str(yaml_text) {
        let value = yaml_serde::Value::deserialize(document)?;
        if value.is_null() {
            continue;
        }
        items.extend(flatten_list(serde_json::to_value(value)?));
    }
    for item in &items {
        named::selected_by_pods(item, &mut ctx.pod_types);
    }
    let mut docs = Vec::new();
    for item in items {
        docs.extend(migrate_value(item, &mut ctx)?);
    }
    apply_kubelets(&mut docs, &mut ctx);
    Ok(MigrateOutput {
        yaml: render(&docs)?,
        warnings: ctx.warnings,
    })
}

/// The items of a `List` (as `kubectl get -o yaml` prints), or the document itself.
fn flatten_list(value: Value) -> Vec<Value> {
    let is_list = str_field(&value, "kind").ends_with("List")
        && value.get("items").is_some_and(Value::is_array);
    match value {
        Value::Object(mut map) if is_list => match map.remove("items") {
            Some(Value::Array(items)) => items,
            _ => Vec::new(),
        },
        other => vec![other],
    }
}

fn str_field<'a>(value: &'a Value, field: &str) -> &'a str {
    value.get(field).and_then(Value::as_str).unwrap_or("")
}

fn object_name(value: &Value) -> String {
    let kind = str_field(value, "kind");
    let name = value
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or("<unnamed>");
    format!("{kind}/{name}")
}

fn migrate_value(value: Value, ctx: &mut Ctx) -> Result<Vec<Doc>, ApiError> {
    let api_version = str_field(&value, "apiVersion").to_string();
    let kind = str_field(&value, "kind").to_string();
    match (api_version.as_str(), kind.as_str()) {
        ("karpenter.sh/v1alpha5", "Provisioner") => {
            nodepool::from_provisioner(serde_json::from_value(value)?, ctx)
        }
        ("karpenter.k8s.aws/v1alpha1", "AWSNodeTemplate") => Ok(vec![Doc::NodeClass(Box::new(
            nodeclass::from_node_template(serde_json::from_value(value)?, ctx),
        ))]),
        ("karpenter.sh/v1beta1", "NodePool") => Ok(vec![Doc::NodePool(Box::new(
            nodepool::from_v1beta1(serde_json::from_value(value)?, ctx),
        ))]),
        ("karpenter.k8s.aws/v1beta1", "EC2NodeClass") => Ok(vec![Doc::NodeClass(Box::new(
            nodeclass::from_v1beta1(serde_json::from_value(value)?, ctx),
        ))]),
        ("karpenter.sh/v1" | "karpenter.k8s.aws/v1", _) => Ok(vec![Doc::Raw(value)]),
        // Workloads are read for the instance types their pods select (`named`), not written.
        (
            "v1" | "apps/v1" | "batch/v1",
            "Pod" | "Deployment" | "StatefulSet" | "DaemonSet" | "ReplicaSet" | "Job" | "CronJob",
        ) => Ok(Vec::new()),
        _ if is_foreign_node_class(&api_version, &kind) => Err(ApiError::Invalid {
            object: object_name(&value),
            message: format!(
                "{api_version} {kind} is the node class of another cloud's Karpenter provider; \
                 Kerf launches EC2 instances only: replace it with a karpenter.k8s.aws/v1 EC2NodeClass"
            ),
        }),
        _ => {
            let name = object_name(&value);
            ctx.warn(
                &name,
                format!("{api_version} {kind} is not a Karpenter API Kerf migrates; passed through unchanged"),
            );
            Ok(vec![Doc::Raw(value)])
        }
    }
}

/// Whether a document is another provider's node class (AKSNodeClass, GCENodeClass, ...):
/// something that would make Kerf launch on a cloud it does not drive.
fn is_foreign_node_class(api_version: &str, kind: &str) -> bool {
    let group = api_version.split('/').next().unwrap_or_default();
    let karpenter_group = group.starts_with("karpenter.") || group.ends_with(".karpenter.sh");
    let own_group = matches!(group, "karpenter.sh" | "karpenter.k8s.aws");
    (kind.ends_with("NodeClass") && kind != "EC2NodeClass") || (karpenter_group && !own_group)
}

fn apply_kubelets(docs: &mut [Doc], ctx: &mut Ctx) {
    for mv in std::mem::take(&mut ctx.kubelets) {
        let class = docs.iter_mut().find_map(|d| match d {
            Doc::NodeClass(c) if c.metadata.name.as_deref() == Some(mv.node_class.as_str()) => {
                Some(c)
            }
            _ => None,
        });
        let object = format!("EC2NodeClass/{}", mv.node_class);
        match class {
            Some(class) => match &class.spec.kubelet {
                None => class.spec.kubelet = Some(mv.kubelet),
                Some(existing) if *existing == mv.kubelet => {}
                Some(_) => ctx.warn(
                    &mv.source,
                    format!("kubelet settings differ from those already moved to {object}; kept the first, split the node class to keep both"),
                ),
            },
            None => {
                let json = serde_json::to_string(&mv.kubelet).unwrap_or_default();
                ctx.warn(
                    &mv.source,
                    format!("kubelet settings move to {object}, which is not in the input: add `spec.kubelet: {json}` to it"),
                );
            }
        }
    }
}

fn render(docs: &[Doc]) -> Result<String, ApiError> {
    let mut out = String::new();
    for doc in docs {
        let text = match doc {
            Doc::NodePool(p) => yaml_serde::to_string(p)?,
            Doc::NodeClass(c) => yaml_serde::to_string(c)?,
            Doc::Raw(v) => yaml_serde::to_string(v)?,
        };
        out.push_str("---\n");
        out.push_str(&text);
    }
    Ok(out)
}
