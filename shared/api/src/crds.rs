//! CustomResourceDefinitions generated from the v1 types, rendered as Karpenter ships them.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    CustomResourceDefinition, JSONSchemaProps,
};
use kube_core::CustomResourceExt;
use serde_json::{Map, Value, json};

use crate::ApiError;
use crate::v1::schema::QUANTITY;
use crate::v1::{EC2NodeClass, NodeClaim, NodePool};
use crate::v1alpha1::NodeOverlay;

/// Every CRD Kerf installs: NodePool, NodeClaim, EC2NodeClass, and NodeOverlay (served
/// always, as Karpenter's chart installs it; read only behind the `NodeOverlay` gate).
pub fn all() -> Vec<CustomResourceDefinition> {
    vec![
        tidy(NodePool::crd()),
        tidy(NodeClaim::crd()),
        tidy(EC2NodeClass::crd()),
        tidy(NodeOverlay::crd()),
    ]
}

/// The file name a CRD is committed under, e.g. `karpenter.sh_nodepools.yaml`.
pub fn file_name(crd: &CustomResourceDefinition) -> String {
    format!("{}_{}.yaml", crd.spec.group, crd.spec.names.plural)
}

/// One YAML document for one CRD.
pub fn crd_yaml(crd: &CustomResourceDefinition) -> Result<String, ApiError> {
    Ok(format!("---\n{}", yaml_serde::to_string(crd)?))
}

/// All CRDs as one multi-document YAML stream.
pub fn to_yaml() -> Result<String, ApiError> {
    let docs: Result<Vec<String>, ApiError> = all().iter().map(crd_yaml).collect();
    Ok(docs?.concat())
}

/// Every CRD paired with its file name and YAML.
pub fn files() -> Result<Vec<(String, String)>, ApiError> {
    all()
        .iter()
        .map(|crd| Ok((file_name(crd), crd_yaml(crd)?)))
        .collect()
}

/// Brings the generated CRD closer to what Karpenter ships: a `listKind`, the
/// apiVersion/kind/metadata root properties, integer bounds, quantity patterns, no `nullable`,
/// and the AWS provider's label restrictions ([`crate::restricted`]).
fn tidy(mut crd: CustomResourceDefinition) -> CustomResourceDefinition {
    let kind = crd.spec.names.kind.clone();
    crd.spec.names.list_kind = Some(format!("{kind}List"));
    for version in &mut crd.spec.versions {
        let Some(validation) = version.schema.as_mut() else {
            continue;
        };
        let Some(schema) = validation.open_api_v3_schema.take() else {
            continue;
        };
        validation.open_api_v3_schema = Some(tidy_schema(schema, &kind));
    }
    crd
}

fn tidy_schema(schema: JSONSchemaProps, kind: &str) -> JSONSchemaProps {
    let Ok(mut value) = serde_json::to_value(&schema) else {
        return schema;
    };
    tidy_value(&mut value);
    crate::restricted::add_rules(kind, &mut value);
    if let Value::Object(root) = &mut value {
        add_root_properties(root);
    }
    serde_json::from_value(value).unwrap_or(schema)
}

fn add_root_properties(root: &mut Map<String, Value>) {
    root.remove("title");
    if let Some(Value::Object(properties)) = root.get_mut("properties") {
        properties.insert("apiVersion".into(), json!({"type": "string"}));
        properties.insert("kind".into(), json!({"type": "string"}));
        properties.insert("metadata".into(), json!({"type": "object"}));
    }
}

fn tidy_value(value: &mut Value) {
    match value {
        Value::Object(map) => {
            tidy_object(map);
            map.values_mut().for_each(tidy_value);
        }
        Value::Array(items) => items.iter_mut().for_each(tidy_value),
        _ => {}
    }
}

fn tidy_object(map: &mut Map<String, Value>) {
    map.remove("nullable");
    for key in ["minimum", "maximum"] {
        if let Some(n) = map.get(key).and_then(Value::as_f64)
            && n.fract() == 0.0
        {
            map.insert(key.into(), json!(n as i64));
        }
    }
    let int_or_string = map.get("x-kubernetes-int-or-string") == Some(&Value::Bool(true));
    if int_or_string && !map.contains_key("anyOf") {
        map.insert(
            "anyOf".into(),
            json!([{"type": "integer"}, {"type": "string"}]),
        );
        map.insert("pattern".into(), json!(QUANTITY));
        map.remove("description");
    }
}
