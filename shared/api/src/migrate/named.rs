//! The instance types a migration's input names outright: the Provisioners' own
//! `node.kubernetes.io/instance-type In [...]` requirements and the pods' (and pod
//! templates') node selectors and required node affinity on that key. A v1alpha5 default that
//! would rule them out is not written (see `nodepool`).

use std::collections::BTreeSet;

use kerf_labels as labels;
use serde_json::Value;

/// The deprecated key some manifests still select on.
const BETA_INSTANCE_TYPE: &str = "beta.kubernetes.io/instance-type";

/// Instance types the pod specs in `doc` select (a Pod's spec, a workload's or a CronJob's
/// template).
pub(super) fn selected_by_pods(doc: &Value, out: &mut BTreeSet<String>) {
    let template = doc
        .pointer("/spec/template/spec")
        .or_else(|| doc.pointer("/spec/jobTemplate/spec/template/spec"));
    let spec = match template {
        Some(s) => s,
        None if doc["kind"] == "Pod" => &doc["spec"],
        None => return,
    };
    for key in [labels::INSTANCE_TYPE, BETA_INSTANCE_TYPE] {
        if let Some(t) = spec["nodeSelector"][key].as_str() {
            out.insert(t.to_string());
        }
    }
    let terms = &spec["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
        ["nodeSelectorTerms"];
    for term in terms.as_array().into_iter().flatten() {
        for e in term["matchExpressions"].as_array().into_iter().flatten() {
            let key = e["key"].as_str().unwrap_or_default();
            if (key == labels::INSTANCE_TYPE || key == BETA_INSTANCE_TYPE) && e["operator"] == "In"
            {
                let values = e["values"].as_array().into_iter().flatten();
                out.extend(values.filter_map(Value::as_str).map(str::to_string));
            }
        }
    }
}

/// An EC2 instance type's name read as Karpenter's labels read it: category (the letters
/// before the generation), generation, and whether the processor is AWS Graviton (`g` right
/// after the generation: `t4g`, `c7gn`, `im4gn`).
pub(super) struct Named<'a> {
    pub category: &'a str,
    pub generation: u32,
    pub graviton: bool,
}

/// `None` for a name that is not `<family>.<size>` with a generation digit.
pub(super) fn parse(name: &str) -> Option<Named<'_>> {
    let family = name.split_once('.')?.0;
    let digit = family.find(|c: char| c.is_ascii_digit())?;
    let (category, rest) = family.split_at(digit);
    let end = rest
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(rest.len());
    let (generation, suffix) = rest.split_at(end);
    Some(Named {
        category,
        generation: generation.parse().ok()?,
        graviton: suffix.starts_with('g'),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn names_read_as_karpenters_labels() {
        let t = parse("t4g.2xlarge").unwrap();
        assert_eq!((t.category, t.generation, t.graviton), ("t", 4, true));
        let g = parse("g4dn.xlarge").unwrap();
        assert_eq!((g.category, g.generation, g.graviton), ("g", 4, false));
        let i = parse("im4gn.large").unwrap();
        assert_eq!((i.category, i.graviton), ("im", true));
        assert!(parse("metal").is_none());
    }

    #[test]
    fn pods_and_templates_select_types_by_selector_and_affinity() {
        let mut out = BTreeSet::new();
        selected_by_pods(
            &json!({"kind": "Pod", "spec": {"nodeSelector": {"node.kubernetes.io/instance-type": "t4g.2xlarge"}}}),
            &mut out,
        );
        selected_by_pods(
            &json!({"kind": "Deployment", "spec": {"template": {"spec": {"affinity": {"nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [{"matchExpressions": [
                    {"key": "node.kubernetes.io/instance-type", "operator": "In", "values": ["x2gd.large"]}]}]}}}}}}}),
            &mut out,
        );
        assert_eq!(
            out.into_iter().collect::<Vec<_>>(),
            ["t4g.2xlarge", "x2gd.large"]
        );
    }
}
