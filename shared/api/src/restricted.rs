//! Label restrictions the AWS provider adds to the core CRDs as CEL rules: the
//! `karpenter.k8s.aws` domain is reserved except for its well-known labels, and a NodePool's
//! requirements may not name `karpenter.sh/nodepool` (a NodeClaim's may).

use serde_json::{Value, json};

/// The well-known `karpenter.k8s.aws/*` labels a NodePool may set or require.
pub use kerf_labels::aws::WELL_KNOWN as AWS_WELL_KNOWN_LABELS;

const AWS_DOMAIN: &str = "label domain \"karpenter.k8s.aws\" is restricted";
const NODEPOOL_LABEL: &str = "label \"karpenter.sh/nodepool\" is restricted";

fn well_known_list() -> String {
    let quoted: Vec<String> = AWS_WELL_KNOWN_LABELS
        .iter()
        .map(|l| format!("\"{l}\""))
        .collect();
    format!("[{}]", quoted.join(", "))
}

/// The rule on one label key (`self` is the key).
pub fn aws_domain_key_rule() -> Value {
    json!({"message": AWS_DOMAIN, "rule": format!(
        "self in {} || !self.find(\"^([^/]+)\").endsWith(\"karpenter.k8s.aws\")",
        well_known_list()
    )})
}

/// The rule on a label map (`self` is the map, iterated by key).
pub fn aws_domain_map_rule() -> Value {
    json!({"message": AWS_DOMAIN, "rule": format!(
        "self.all(x, x in {} || !x.find(\"^([^/]+)\").endsWith(\"karpenter.k8s.aws\"))",
        well_known_list()
    )})
}

/// Adds the rules to the generated schema of the CRD of `kind`.
pub fn add_rules(kind: &str, schema: &mut Value) {
    match kind {
        "NodePool" => {
            let template = "/properties/spec/properties/template";
            let key = format!("{template}/properties/spec{REQUIREMENT_KEY}");
            insert_rule(schema, &key, 1, nodepool_key_rule());
            push_rule(schema, &key, aws_domain_key_rule());
            let labels = format!("{template}/properties/metadata/properties/labels");
            push_rule(schema, &labels, aws_domain_map_rule());
        }
        "NodeClaim" => {
            let key = format!("/properties/spec{REQUIREMENT_KEY}");
            push_rule(schema, &key, aws_domain_key_rule());
        }
        _ => {}
    }
}

const REQUIREMENT_KEY: &str = "/properties/requirements/items/properties/key";

fn nodepool_key_rule() -> Value {
    json!({"message": NODEPOOL_LABEL, "rule": "self != \"karpenter.sh/nodepool\""})
}

fn rules_at<'a>(schema: &'a mut Value, pointer: &str) -> Option<&'a mut Vec<Value>> {
    let node = schema.pointer_mut(pointer)?.as_object_mut()?;
    node.entry("x-kubernetes-validations")
        .or_insert_with(|| Value::Array(Vec::new()))
        .as_array_mut()
}

fn push_rule(schema: &mut Value, pointer: &str, rule: Value) {
    if let Some(rules) = rules_at(schema, pointer) {
        rules.push(rule);
    }
}

fn insert_rule(schema: &mut Value, pointer: &str, index: usize, rule: Value) {
    if let Some(rules) = rules_at(schema, pointer) {
        rules.insert(index.min(rules.len()), rule);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules_land_on_the_nodepool_requirement_key_in_karpenters_order() {
        let key = json!({"x-kubernetes-validations": [{"rule": "a"}, {"rule": "b"}]});
        let mut schema = json!({"properties": {"spec": {"properties": {"template": {"properties": {
            "spec": {"properties": {"requirements": {"items": {"properties": {"key": key}}}}},
            "metadata": {"properties": {"labels": {"type": "object"}}}
        }}}}}});
        add_rules("NodePool", &mut schema);
        let p = "/properties/spec/properties/template/properties/spec/properties/requirements/items/properties/key/x-kubernetes-validations";
        let rules = schema.pointer(p).and_then(Value::as_array).cloned();
        let texts: Vec<String> = rules
            .unwrap_or_default()
            .iter()
            .map(|r| {
                r["message"]
                    .as_str()
                    .unwrap_or(r["rule"].as_str().unwrap_or(""))
                    .to_string()
            })
            .collect();
        assert_eq!(texts, ["a", NODEPOOL_LABEL, "b", AWS_DOMAIN]);
    }
}
