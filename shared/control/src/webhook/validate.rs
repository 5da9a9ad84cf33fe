//! Validation of Kerf's CRDs at admission: first the CRD's own rules (structural schema and
//! CEL, the same rules the API server evaluates, via `kerf-schema`), then what a schema
//! cannot say: requirement operators and values the engine must understand, capacity types
//! that exist, taints set twice, budget schedules that parse, node classes Kerf can launch
//! with, kubelet quantities. Every message names the field.

use std::sync::LazyLock;

use kerf_api::v1::{EC2NodeClass, NodeClaim, NodePool};
use kerf_engine::cron::Cron;
use kerf_engine::requirements::{Requirement, SelectorRequirement};
use serde_json::Value;

use crate::names::{CAPACITY_TYPE, NODEPOOL};

/// The kinds this webhook validates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    NodePool,
    NodeClaim,
    EC2NodeClass,
}

impl Kind {
    /// The kind of a `group`/`kind` pair, if it is one of Kerf's.
    pub fn of(group: &str, kind: &str) -> Option<Kind> {
        match (group, kind) {
            ("karpenter.sh", "NodePool") => Some(Kind::NodePool),
            ("karpenter.sh", "NodeClaim") => Some(Kind::NodeClaim),
            ("karpenter.k8s.aws", "EC2NodeClass") => Some(Kind::EC2NodeClass),
            _ => None,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Kind::NodePool => "NodePool",
            Kind::NodeClaim => "NodeClaim",
            Kind::EC2NodeClass => "EC2NodeClass",
        }
    }
}

/// The openAPIV3Schema of each CRD, by kind.
static SCHEMAS: LazyLock<Vec<(String, Value)>> = LazyLock::new(|| {
    kerf_api::crds::all()
        .into_iter()
        .filter_map(|crd| {
            let v = serde_json::to_value(&crd).ok()?;
            let schema = v["spec"]["versions"][0]["schema"]["openAPIV3Schema"].clone();
            Some((crd.spec.names.kind, schema))
        })
        .collect()
});

/// Every problem with `obj` (and, on update, against `old`), as `field: message`.
pub fn validate(kind: Kind, obj: &Value, old: Option<&Value>) -> Vec<String> {
    let Some((_, schema)) = SCHEMAS.iter().find(|(k, _)| k == kind.name()) else {
        return vec![format!("no schema for {}", kind.name())];
    };
    let mut obj = obj.clone();
    kerf_schema::schema::default_and_prune(schema, &mut obj);
    let causes = kerf_schema::schema::validate(schema, &obj, old);
    if !causes.is_empty() {
        return causes.iter().map(|c| c.to_string()).collect();
    }
    match kind {
        Kind::NodePool => typed::<NodePool>(&obj).map_or_else(unreadable, |np| node_pool(&np)),
        Kind::NodeClaim => typed::<NodeClaim>(&obj).map_or_else(unreadable, |c| {
            requirements(&sel(&c.spec.requirements), "spec.requirements")
        }),
        Kind::EC2NodeClass => {
            typed::<EC2NodeClass>(&obj).map_or_else(unreadable, |nc| node_class(&nc))
        }
    }
}

fn typed<T: serde::de::DeserializeOwned>(obj: &Value) -> Result<T, serde_json::Error> {
    serde_json::from_value(obj.clone())
}

/// The one problem of an object its type cannot read.
fn unreadable(e: serde_json::Error) -> Vec<String> {
    vec![format!("object: {e}")]
}

fn sel(reqs: &[kerf_api::v1::NodeSelectorRequirementWithMinValues]) -> Vec<SelectorRequirement> {
    reqs.iter()
        .filter_map(|r| serde_json::to_value(r).ok())
        .filter_map(|v| serde_json::from_value(v).ok())
        .collect()
}

/// Requirements the engine can evaluate, with capacity types that exist.
fn requirements(reqs: &[SelectorRequirement], field: &str) -> Vec<String> {
    let mut out = Vec::new();
    for (i, r) in reqs.iter().enumerate() {
        let f = format!("{field}[{i}]");
        if let Err(e) = Requirement::from_selector(r) {
            out.push(format!("{f}: {e}"));
        }
        if r.key == CAPACITY_TYPE
            && r.operator == kerf_engine::requirements::Operator::In
            && !r
                .values
                .iter()
                .any(|v| kerf_catalog::CapacityType::parse(v).is_some())
        {
            out.push(format!(
                "{f}.values: no valid capacity type in {:?}; use on-demand, spot or reserved",
                r.values
            ));
        }
    }
    out
}

fn node_pool(np: &NodePool) -> Vec<String> {
    let t = &np.spec.template.spec;
    let mut out = requirements(&sel(&t.requirements), "spec.template.spec.requirements");
    for (i, r) in t.requirements.iter().enumerate() {
        if r.key == NODEPOOL {
            out.push(format!(
                "spec.template.spec.requirements[{i}].key: label \"{NODEPOOL}\" is set by Kerf and may not be required"
            ));
        }
    }
    let mut seen = Vec::new();
    for (list, ts) in [("taints", &t.taints), ("startupTaints", &t.startup_taints)] {
        for (i, taint) in ts.iter().enumerate() {
            let key = (taint.key.clone(), taint.effect);
            if seen.contains(&key) {
                out.push(format!(
                    "spec.template.spec.{list}[{i}]: duplicate taint {}:{:?} (key and effect must be unique across taints and startupTaints)",
                    taint.key, taint.effect
                ));
            }
            seen.push(key);
        }
    }
    for (i, b) in np.spec.disruption.budgets.iter().enumerate() {
        if let Some(s) = &b.schedule
            && let Err(e) = Cron::parse(s)
        {
            out.push(format!(
                "spec.disruption.budgets[{i}].schedule: invalid cron {s:?}: {e}"
            ));
        }
    }
    let r = &t.node_class_ref;
    if (r.group.as_str(), r.kind.as_str()) != ("karpenter.k8s.aws", "EC2NodeClass") {
        out.push(format!(
            "spec.template.spec.nodeClassRef: Kerf launches with karpenter.k8s.aws/EC2NodeClass, not {}/{}",
            r.group, r.kind
        ));
    }
    for (k, q) in &np.spec.limits {
        if kerf_catalog::quantity::parse(&q.0).is_err() {
            out.push(format!("spec.limits.{k}: invalid quantity {:?}", q.0));
        }
    }
    out
}

fn node_class(nc: &EC2NodeClass) -> Vec<String> {
    match kerf_convert::cluster::settings(nc) {
        Ok(_) => Vec::new(),
        Err(e) => vec![e.to_string()],
    }
}

#[cfg(test)]
#[path = "validate_tests.rs"]
mod tests;
