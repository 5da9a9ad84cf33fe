//! The invalid NodePools, EC2NodeClasses and NodeClaims (and invalid writes of valid ones)
//! that Kerf's in-process API server is tested to reject (shared/sim/tests: cel.rs,
//! lifecycle.rs, labels.rs, crud.rs), as data, and [`attempt`], which sends one to any API
//! server and returns how it answered. Every case names its objects uniquely, so all of
//! them run against one server.

use kube::Client;
use kube::api::{Patch, PatchParams, PostParams};
use serde_json::{Value, json};

use super::api::{api_for, status};

/// The write that must fail.
#[derive(Debug, Clone)]
pub enum Op {
    /// Create the document.
    Create(Value),
    /// Create `base`, then merge-patch it with `patch`.
    Merge { base: Value, patch: Value },
    /// Create `base`, then strategic-merge-patch it (custom resources do not support it).
    Strategic { base: Value, patch: Value },
    /// Create `base`, then replace it without a resourceVersion.
    ReplaceWithoutVersion { base: Value },
}

/// One invalid write, where the sim's tests check it, and the field path the sim names.
#[derive(Debug, Clone)]
pub struct Case {
    pub name: &'static str,
    /// The sim test that checks it.
    pub from: &'static str,
    pub op: Op,
}

/// How a server answered a write: `code` 0 with `accepted` when it took it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Answer {
    pub accepted: bool,
    pub code: u16,
    pub reason: String,
    pub message: String,
    /// `(field, message)` of every cause.
    pub causes: Vec<(String, String)>,
}

/// A valid NodePool (the sim tests' `nodepool`).
pub fn nodepool(name: &str) -> Value {
    json!({"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": {"name": name},
        "spec": {"template": {"spec": {
            "requirements": [{"key": "kubernetes.io/arch", "operator": "In", "values": ["amd64"]}],
            "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"}}}}})
}

/// A valid EC2NodeClass (the sim tests' `ec2nodeclass`).
pub fn ec2nodeclass(name: &str) -> Value {
    let terms = json!([{"tags": {"karpenter.sh/discovery": "demo"}}]);
    json!({"apiVersion": "karpenter.k8s.aws/v1", "kind": "EC2NodeClass", "metadata": {"name": name},
        "spec": {"role": "KarpenterNodeRole-demo", "amiSelectorTerms": [{"alias": "al2023@latest"}],
            "subnetSelectorTerms": terms, "securityGroupSelectorTerms": terms}})
}

/// A NodeClaim with these requirements.
pub fn nodeclaim(name: &str, requirements: Value) -> Value {
    json!({"apiVersion": "karpenter.sh/v1", "kind": "NodeClaim", "metadata": {"name": name},
        "spec": {"requirements": requirements,
            "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"}}})
}

fn pool_with(name: &str, path: &[&str], v: Value) -> Value {
    let mut doc = nodepool(name);
    set(&mut doc, path, v);
    doc
}

fn set(doc: &mut Value, path: &[&str], v: Value) {
    let mut at = doc;
    for p in path {
        at = &mut at[*p];
    }
    *at = v;
}

const REQS: [&str; 4] = ["spec", "template", "spec", "requirements"];

fn requirement(name: &str, op: &str, values: Value) -> Value {
    pool_with(
        name,
        &REQS,
        json!([{"key": "karpenter.k8s.aws/instance-generation", "operator": op, "values": values}]),
    )
}

fn create(name: &'static str, from: &'static str, doc: Value) -> Case {
    Case {
        name,
        from,
        op: Op::Create(doc),
    }
}

/// Every case.
pub fn cases() -> Vec<Case> {
    let arch = json!([{"key": "kubernetes.io/arch", "operator": "In", "values": ["amd64"]}]);
    let mut cases = vec![
        create(
            "budget-schedule-without-duration",
            "cel.rs budget_schedule_needs_a_duration",
            pool_with(
                "budget-schedule-without-duration",
                &["spec", "disruption"],
                json!({"budgets": [{"nodes": "0", "schedule": "0 9 * * mon-fri"}]}),
            ),
        ),
        create(
            "gt-not-an-integer",
            "cel.rs gt_and_lt_need_one_non_negative_integer",
            requirement("gt-not-an-integer", "Gt", json!(["abc"])),
        ),
        create(
            "lt-negative",
            "cel.rs gt_and_lt_need_one_non_negative_integer",
            requirement("lt-negative", "Lt", json!(["-4"])),
        ),
        create(
            "gte-two-values",
            "cel.rs gt_and_lt_need_one_non_negative_integer",
            requirement("gte-two-values", "Gte", json!(["1", "2"])),
        ),
        create(
            "min-values-above-values",
            "cel.rs min_values_cannot_exceed_the_in_values",
            pool_with(
                "min-values-above-values",
                &REQS,
                json!([{"key": "node.kubernetes.io/instance-type", "operator": "In",
                    "values": ["m5.large"], "minValues": 2}]),
            ),
        ),
        create(
            "static-with-weight",
            "cel.rs static_nodepools_take_no_weight",
            pool_with("static-with-weight", &["spec"], {
                let mut s = nodepool("x")["spec"].clone();
                s["replicas"] = json!(3);
                s["weight"] = json!(10);
                s
            }),
        ),
        create(
            "static-with-cpu-limit",
            "cel.rs static_nodepools_take_no_weight",
            pool_with("static-with-cpu-limit", &["spec"], {
                let mut s = nodepool("x")["spec"].clone();
                s["replicas"] = json!(3);
                s["limits"] = json!({"cpu": "10"});
                s
            }),
        ),
        create(
            "schema-errors-block-the-rules",
            "cel.rs blocking_schema_errors_skip_the_rules",
            pool_with("schema-errors-block-the-rules", &["spec"], {
                let mut s = nodepool("x")["spec"].clone();
                s["replicas"] = json!(3);
                s["weight"] = json!(10);
                s["template"]["spec"]["requirements"][0]["operator"] = json!("Sometimes");
                s
            }),
        ),
        create(
            "weight-operator-and-missing-name",
            "lifecycle.rs invalid_nodepool_is_rejected_with_field_causes",
            pool_with("weight-operator-and-missing-name", &["spec"], {
                let mut s = nodepool("x")["spec"].clone();
                s["weight"] = json!(500);
                s["template"]["spec"]["requirements"][0]["operator"] = json!("Sometimes");
                s["template"]["spec"]["nodeClassRef"] =
                    json!({"group": "karpenter.k8s.aws", "kind": "EC2NodeClass"});
                s
            }),
        ),
        create(
            "restricted-labels",
            "labels.rs restricted_labels_are_rejected_on_nodepools",
            pool_with("restricted-labels", &["spec", "template"], {
                let mut t = nodepool("x")["spec"]["template"].clone();
                t["spec"]["requirements"] = json!([
                    {"key": "karpenter.sh/nodepool", "operator": "In", "values": ["x"]},
                    {"key": "karpenter.k8s.aws/mine", "operator": "Exists"}]);
                t["metadata"] = json!({"labels": {"karpenter.k8s.aws/custom": "x"}});
                t
            }),
        ),
        Case {
            name: "dynamic-to-static",
            from: "cel.rs transition_rules_run_on_updates_only",
            op: Op::Merge {
                base: nodepool("dynamic-to-static"),
                patch: json!({"spec": {"replicas": 2}}),
            },
        },
        Case {
            name: "replace-without-resource-version",
            from: "lifecycle.rs status_subresource_and_generation_on_custom_resources",
            op: Op::ReplaceWithoutVersion {
                base: nodepool("replace-without-resource-version"),
            },
        },
        Case {
            name: "strategic-merge-patch",
            from: "crud.rs merge_json_strategic_and_apply_patches",
            op: Op::Strategic {
                base: nodepool("strategic-merge-patch"),
                patch: json!({"spec": {"weight": 1}}),
            },
        },
        Case {
            name: "claim-node-class-kind-changed",
            from: "cel.rs transition_rules_run_on_updates_only",
            op: Op::Merge {
                base: nodeclaim("claim-node-class-kind-changed", arch.clone()),
                patch: json!({"spec": {"nodeClassRef": {"kind": "OtherClass"}}}),
            },
        },
        Case {
            name: "claim-spec-immutable",
            from: "lifecycle.rs cel_rules_karpenter_relies_on",
            op: Op::Merge {
                base: nodeclaim("claim-spec-immutable", arch),
                patch: json!({"spec": {"expireAfter": "1h"}}),
            },
        },
        create(
            "claim-empty-in-values",
            "lifecycle.rs cel_rules_karpenter_relies_on",
            nodeclaim(
                "claim-empty-in-values",
                json!([{"key": "kubernetes.io/arch", "operator": "In", "values": []}]),
            ),
        ),
        create(
            "claim-requires-hostname",
            "labels.rs nodeclaims_may_require_their_nodepool",
            nodeclaim(
                "claim-requires-hostname",
                json!([{"key": "kubernetes.io/hostname", "operator": "In", "values": ["h"]}]),
            ),
        ),
    ];
    cases.extend(super::invalid_classes::cases());
    cases
}

/// Sends the case's write to the server behind `client`.
pub async fn attempt(client: &Client, case: &Case) -> Answer {
    let doc = match &case.op {
        Op::Create(d) => d,
        Op::Merge { base, .. }
        | Op::Strategic { base, .. }
        | Op::ReplaceWithoutVersion { base } => base,
    };
    let api = api_for(client, doc).await.unwrap();
    let name = doc["metadata"]["name"].as_str().unwrap_or_default();
    let body = || serde_json::from_value(doc.clone()).unwrap();
    let pp = PatchParams::default();
    let result = match &case.op {
        Op::Create(_) => api.create(&PostParams::default(), &body()).await,
        other => {
            if let Err(e) = api.create(&PostParams::default(), &body()).await {
                panic!("{}: creating the valid base object: {e}", case.name);
            }
            match other {
                Op::Merge { patch, .. } => api.patch(name, &pp, &Patch::Merge(patch)).await,
                Op::Strategic { patch, .. } => api.patch(name, &pp, &Patch::Strategic(patch)).await,
                _ => {
                    let mut current = api.get(name).await.unwrap();
                    current.metadata.resource_version = None;
                    api.replace(name, &PostParams::default(), &current).await
                }
            }
        }
    };
    match result {
        Ok(_) => Answer {
            accepted: true,
            ..Answer::default()
        },
        Err(e) => {
            let s = status(e);
            let causes = s
                .details
                .iter()
                .flat_map(|d| &d.causes)
                .map(|c| (c.field.clone(), c.message.clone()))
                .collect();
            Answer {
                accepted: false,
                code: s.code,
                reason: s.reason,
                message: s.message,
                causes,
            }
        }
    }
}
