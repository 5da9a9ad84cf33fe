//! Checks that `template.yaml` and `infra/rbac` deploy exactly the functions in `functions/`,
//! wired to their triggers, each with the permissions its code needs and no others.
//!
//! How "the permissions its code needs" is known: each function binary's call graph is built
//! from the sources it links (the workspace crates `cargo metadata` lists as its
//! dependencies), parsed with `syn` from `main` onwards ([`calls`], [`visit`]). Calls resolve
//! by path and `use` imports; method calls by the receiver's type where the parameters,
//! `let` annotations, struct fields and generic bounds tell it (a port such as `C: Cluster`
//! reaches its adapters' implementations), else by name and arity among the indexed methods,
//! which can only add calls. Along the way:
//! - an AWS SDK operation is a zero-argument method whose name is an operation module of one
//!   of the `aws-sdk-*` crates in the lock file (`ec2.describe_instances()` →
//!   `ec2:DescribeInstances`);
//! - a Kubernetes verb is a kube-rs `Api` method (`get`, `list`, `patch_status`, …) on an
//!   `Api<T>`, where `T` is written at the call site or, in a generic helper, comes from the
//!   caller's argument; a `bool` argument passed as a literal selects the branch of the
//!   callee's `if` on it (`patch_if_unchanged(…, false)` patches the object, not its status).
//!
//! The derived sets are compared both ways with each role's Allow statements (plus what
//! Lambda and the triggers need, and the actions implied by an operation: see [`table`]) and
//! with the rules of the function's ClusterRole and Role in `infra/rbac`. A failure names the
//! action or verb and, for one the code calls, the call chain that reaches it.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod calls;
mod cfn;
mod iam;
mod interruption;
mod kube;
mod metadata;
mod observe;
mod recv;
mod rust;
mod table;
mod ty;
mod visit;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::OnceLock;

use serde_json::Value;

use cfn::Template;
use table::{FUNCTIONS, Function, PENDING_ENV, Trigger};

pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

pub fn template() -> Template {
    Template::load(&root().join("template.yaml").display().to_string())
}

/// The table's functions whose crate exists.
pub fn existing() -> Vec<&'static Function> {
    FUNCTIONS
        .iter()
        .filter(|f| root().join(f.dir).join("Cargo.toml").exists())
        .collect()
}

/// What each existing function's code calls, derived once per test process.
pub fn derived(binary: &str) -> &'static calls::Calls {
    static ALL: OnceLock<BTreeMap<&'static str, calls::Calls>> = OnceLock::new();
    let all = ALL.get_or_init(|| {
        let m = metadata::Metadata::load(&root());
        let sdk = m.sdk_operations();
        existing()
            .into_iter()
            .map(|f| {
                let mut index = rust::Index::default();
                for c in m.crates_of(f.binary) {
                    index.add_crate(&c.ident, &c.root);
                }
                (
                    f.binary,
                    calls::follow(&index, &sdk, &f.binary.replace('-', "_")),
                )
            })
            .collect()
    });
    &all[binary]
}

fn events(t: &Template, f: &Function) -> Vec<Value> {
    let e = &t.resource(f.logical_id)["Properties"]["Events"];
    e.as_object()
        .map(|m| m.values().cloned().collect())
        .unwrap_or_default()
}

#[test]
fn every_function_crate_has_exactly_one_function_with_its_binary() {
    let t = template();
    let dirs: Vec<String> = std::fs::read_dir(root().join("functions"))
        .unwrap()
        .map(|e| format!("functions/{}", e.unwrap().file_name().to_string_lossy()))
        .filter(|d| root().join(d).join("Cargo.toml").exists())
        .collect();
    assert!(dirs.len() >= 2, "no function crates found");
    for d in &dirs {
        assert!(
            FUNCTIONS.iter().any(|f| f.dir == d),
            "{d} has no entry in the template test's FUNCTIONS table"
        );
    }
    let functions = t.of_type("AWS::Serverless::Function");
    let m = metadata::Metadata::load(&root());
    for f in existing() {
        let same_dir: Vec<&String> = functions
            .iter()
            .filter(|id| t.resource(id)["Properties"]["CodeUri"] == f.dir)
            .collect();
        assert_eq!(
            same_dir,
            [f.logical_id],
            "{}: functions with CodeUri {}",
            f.binary,
            f.dir
        );
        let r = t.resource(f.logical_id);
        assert_eq!(
            r["Metadata"]["BuildMethod"], "rust-cargolambda",
            "{}",
            f.logical_id
        );
        assert_eq!(r["Metadata"]["BuildProperties"]["Binary"], f.binary);
        let crates = m.crates_of(f.binary);
        let dir = root().join(f.dir).canonicalize().unwrap();
        assert!(
            crates[0].root.starts_with(&dir),
            "{} is not built from {}",
            f.binary,
            f.dir
        );
    }
    let unknown: Vec<&String> = functions
        .iter()
        .filter(|id| !existing().iter().any(|f| f.logical_id == id.as_str()))
        .collect();
    assert!(unknown.is_empty(), "functions without a crate: {unknown:?}");
    let globals = &t.doc["Globals"]["Function"];
    assert_eq!(globals["Runtime"], "provided.al2023");
    assert_eq!(globals["Handler"], "bootstrap");
    assert_eq!(t.doc["Parameters"]["Architecture"]["Default"], "arm64");
}

#[test]
fn every_queue_rule_and_schedule_is_defined_and_wired() {
    let t = template();
    for f in FUNCTIONS {
        for trigger in f.triggers {
            match trigger {
                Trigger::Queue(q) => {
                    let dlq =
                        t.resource(q)["Properties"]["RedrivePolicy"]["deadLetterTargetArn"].clone();
                    let dlq = cfn::references(&dlq).into_iter().next().unwrap_or_default();
                    assert_eq!(t.resource(&dlq)["Type"], "AWS::SQS::Queue", "{q}'s DLQ");
                }
                Trigger::Schedule(p) => {
                    if root().join(f.dir).exists() {
                        assert_eq!(t.doc["Parameters"][p]["Default"], "rate(1 minute)", "{p}");
                    }
                }
                Trigger::Url => {}
            }
        }
    }
    for f in existing() {
        let evs = events(&t, f);
        let timeout = t.resource(f.logical_id)["Properties"]["Timeout"]
            .as_u64()
            .unwrap();
        for trigger in f.triggers {
            match trigger {
                Trigger::Url => {
                    let url = &t.resource(f.logical_id)["Properties"]["FunctionUrlConfig"];
                    assert_eq!(url["AuthType"], "NONE", "{}", f.logical_id);
                    let out = &t.doc["Outputs"][kerf_cli::webhooks::WEBHOOK_URL]["Value"];
                    let url_id = format!("{}Url", f.logical_id);
                    assert_eq!(
                        out["Fn::GetAtt"],
                        serde_json::json!([url_id, "FunctionUrl"])
                    );
                }
                Trigger::Queue(q) => {
                    let e = evs.iter().find(|e| {
                        e["Type"] == "SQS"
                            && cfn::references(&e["Properties"]["Queue"]).contains(*q)
                    });
                    let e = e.unwrap_or_else(|| panic!("{}: no SQS event on {q}", f.logical_id));
                    assert_eq!(
                        e["Properties"]["FunctionResponseTypes"],
                        serde_json::json!(["ReportBatchItemFailures"])
                    );
                    let visibility = t.resource(q)["Properties"]["VisibilityTimeout"].as_u64();
                    assert!(
                        visibility.unwrap() >= timeout,
                        "{q}: visibility < {timeout}"
                    );
                }
                Trigger::Schedule(p) => {
                    let e = evs.iter().find(|e| e["Type"] == "ScheduleV2");
                    let e = e.unwrap_or_else(|| panic!("{}: no schedule", f.logical_id));
                    let expr = &e["Properties"]["ScheduleExpression"];
                    assert_eq!(expr["Ref"], *p, "{}", f.logical_id);
                }
            }
        }
        let events_expected = f.triggers.iter().filter(|t| !matches!(t, Trigger::Url));
        assert_eq!(
            evs.len(),
            events_expected.count(),
            "{}: events",
            f.logical_id
        );
        let reserved = &t.resource(f.logical_id)["Properties"]["ReservedConcurrentExecutions"];
        assert_eq!(
            reserved.as_u64() == Some(1),
            f.serialized,
            "{}",
            f.logical_id
        );
    }
}

/// The Parameter Store name that refers to a secret: `/aws/reference/secretsmanager/<name>`,
/// with the secret's `Name` expression.
pub fn secret_parameter(t: &Template, secret: &str) -> Value {
    let name = &t.resource(secret)["Properties"]["Name"]["Fn::Sub"];
    let Some([Value::String(text), vars]) = name.as_array().map(Vec::as_slice) else {
        panic!("{secret}: Name is not !Sub [text, vars]");
    };
    serde_json::json!({"Fn::Sub": [format!("/aws/reference/secretsmanager/{text}"), vars]})
}

/// The variables the configuration reader reads (`KERF_*`, and Karpenter's where Kerf takes its
/// name, such as `MIN_VALUES_POLICY`).
fn variables_read() -> Vec<String> {
    let text = std::fs::read_to_string(root().join("shared/function/src/config.rs")).unwrap();
    let mut out: Vec<String> = text
        .split('"')
        .skip(1)
        .step_by(2)
        // Kerf's own variables, and those named as Karpenter names them (MIN_VALUES_POLICY).
        .filter(|s| s.contains('_') && s.chars().all(|c| c.is_ascii_uppercase() || c == '_'))
        .map(str::to_string)
        .collect();
    out.sort();
    out.dedup();
    out
}

#[test]
fn the_environment_holds_only_variables_the_functions_read() {
    let t = template();
    let read = variables_read();
    assert!(read.contains(&"KERF_CLUSTER_NAME".to_string()), "{read:?}");
    for p in PENDING_ENV {
        assert!(
            !read.contains(&p.to_string()),
            "{p} is read now: remove it from PENDING_ENV"
        );
    }
    for f in existing() {
        let env = t.environment(f.logical_id);
        for k in env.keys() {
            assert!(
                read.contains(k) || PENDING_ENV.contains(&k.as_str()),
                "{}: {k} is not read by shared/function/src/config.rs",
                f.logical_id
            );
        }
        for (k, resource) in f.env {
            let v = env
                .get(*k)
                .unwrap_or_else(|| panic!("{}: {k} unset", f.logical_id));
            if t.resource(resource)["Type"] == "AWS::SecretsManager::Secret" {
                assert_eq!(*v, secret_parameter(&t, resource), "{}: {k}", f.logical_id);
            } else {
                let refs = cfn::references(v);
                assert!(refs.contains(*resource), "{}: {k} = {v}", f.logical_id);
            }
        }
        assert_eq!(env["KERF_CLUSTER_NAME"]["Ref"], "ClusterName");
        assert_eq!(env["KERF_NAMESPACE"], kube::NAMESPACE);
    }
}
