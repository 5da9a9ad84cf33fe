//! Each function's RBAC in `infra/rbac` against the Kubernetes verbs its code calls (both
//! ways), and the EKS access entry that maps the function's role to the group the RBAC binds.
//! Kerf's own objects (the decision Lease, the unavailable-offerings ConfigMap) are granted by
//! a Role in Kerf's namespace, limited to their names where the verb allows it.

use std::collections::BTreeSet;

use serde::Deserialize;
use serde_json::{Value, json};

use crate::table::{KUBE_TYPES, own_namespace_object};
use crate::{derived, existing, root, template};

/// Kerf's namespace (`KERF_NAMESPACE`, `infra/rbac/00-namespace.yaml`).
pub const NAMESPACE: &str = "kerf";

/// (API group, resource[/subresource], verb).
type Grant = (String, String, String);

fn documents(path: &str) -> Vec<Value> {
    let text = std::fs::read_to_string(root().join(path)).unwrap_or_else(|e| panic!("{path}: {e}"));
    yaml_serde::Deserializer::from_str(&text)
        .map(|d| serde_json::to_value(yaml_serde::Value::deserialize(d).unwrap()).unwrap())
        .filter(|v| !v.is_null())
        .collect()
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .into_iter()
        .flatten()
        .map(|s| s.as_str().unwrap_or_default().to_string())
        .collect()
}

/// The grants of a role's rules, each with its resourceNames.
fn grants(role: &Value) -> Vec<(Grant, Vec<String>)> {
    let mut out = Vec::new();
    for rule in role["rules"].as_array().into_iter().flatten() {
        for g in strings(&rule["apiGroups"]) {
            for r in strings(&rule["resources"]) {
                for v in strings(&rule["verbs"]) {
                    out.push(((g.clone(), r.clone(), v), strings(&rule["resourceNames"])));
                }
            }
        }
    }
    out
}

fn kube_type(kind: &str) -> (&'static str, &'static str) {
    let t = KUBE_TYPES.iter().find(|(k, _, _)| *k == kind);
    let (_, group, resource) = t.unwrap_or_else(|| panic!("add {kind} to KUBE_TYPES"));
    (group, resource)
}

fn by_kind<'a>(docs: &'a [Value], kind: &str) -> Vec<&'a Value> {
    docs.iter().filter(|d| d["kind"] == kind).collect()
}

fn binding_subjects(docs: &[Value], kind: &str, role: &Value) -> Vec<Value> {
    by_kind(docs, kind)
        .into_iter()
        .filter(|b| b["roleRef"]["name"] == role["metadata"]["name"])
        .flat_map(|b| b["subjects"].as_array().cloned().unwrap_or_default())
        .collect()
}

#[test]
fn rbac_grants_exactly_the_kubernetes_verbs_each_function_calls() {
    for f in existing() {
        let docs = documents(f.rbac);
        let calls = &derived(f.binary).kube;
        let mut need: BTreeSet<Grant> = BTreeSet::new();
        for (kind, verb, sub) in calls.keys() {
            let (group, resource) = kube_type(kind);
            let resource = if sub.is_empty() {
                resource.to_string()
            } else {
                format!("{resource}/{sub}")
            };
            need.insert((group.to_string(), resource, verb.clone()));
        }
        let mut have = BTreeSet::new();
        for cr in by_kind(&docs, "ClusterRole") {
            for (g, _) in grants(cr) {
                let own = KUBE_TYPES
                    .iter()
                    .any(|(k, gr, r)| own_namespace_object(k).is_some() && g.0 == *gr && g.1 == *r);
                assert!(!own, "{}: {g:?} belongs in the Role in {NAMESPACE}", f.rbac);
                have.insert(g);
            }
        }
        for role in by_kind(&docs, "Role") {
            assert_eq!(role["metadata"]["namespace"], NAMESPACE, "{}", f.rbac);
            for (g, names) in grants(role) {
                let (kind, _, _) = KUBE_TYPES
                    .iter()
                    .find(|(_, gr, r)| g.0 == *gr && g.1 == *r)
                    .unwrap_or_else(|| panic!("{}: {g:?} is not a type Kerf opens", f.rbac));
                let name = own_namespace_object(kind)
                    .unwrap_or_else(|| panic!("{}: {kind} is not in Kerf's namespace", f.rbac));
                let expected: Vec<String> = if g.2 == "create" {
                    vec![]
                } else {
                    vec![name.into()]
                };
                assert_eq!(names, expected, "{}: resourceNames of {g:?}", f.rbac);
                have.insert(g);
            }
        }
        let missing: Vec<String> = need
            .difference(&have)
            .map(|g| {
                let chain = calls.iter().find(|((k, v, _), _)| {
                    kube_type(k).1 == g.1.split('/').next().unwrap_or_default() && *v == g.2
                });
                format!(
                    "{g:?} (called: {})",
                    chain.map(|c| c.1.join(" > ")).unwrap_or_default()
                )
            })
            .collect();
        assert!(
            missing.is_empty(),
            "{} lacks:\n  {}",
            f.rbac,
            missing.join("\n  ")
        );
        let extra: Vec<&Grant> = have.difference(&need).collect();
        assert!(
            extra.is_empty(),
            "{} grants verbs no code of {} calls: {extra:?}",
            f.rbac,
            f.binary
        );
    }
}

/// `kubectl apply -f infra/rbac/` applies the files in name order: the namespace the Roles
/// live in must come first, or a new cluster refuses them.
#[test]
fn the_namespace_is_applied_before_the_roles_in_it() {
    let mut files: Vec<String> = std::fs::read_dir(root().join("infra/rbac"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".yaml"))
        .collect();
    files.sort();
    let first = documents(&format!("infra/rbac/{}", files[0]));
    assert!(
        first.iter().any(|d| d["kind"] == "Namespace"),
        "{} sorts first and holds no Namespace",
        files[0]
    );
    for f in &files[1..] {
        let docs = documents(&format!("infra/rbac/{f}"));
        assert!(docs.iter().all(|d| d["kind"] != "Namespace"), "{f}");
    }
}

#[test]
fn access_entries_map_each_role_to_the_group_its_rbac_binds() {
    let t = template();
    let namespace = documents("infra/rbac/00-namespace.yaml");
    assert_eq!(namespace[0]["metadata"]["name"], NAMESPACE);
    for f in existing() {
        let role = t.role_of(f.logical_id);
        let entries: Vec<String> = t
            .of_type("AWS::EKS::AccessEntry")
            .into_iter()
            .filter(|e| {
                t.resource(e)["Properties"]["PrincipalArn"] == json!({"Fn::GetAtt": [role, "Arn"]})
            })
            .collect();
        assert_eq!(entries.len(), 1, "{role}: access entries {entries:?}");
        let entry = &t.resource(&entries[0])["Properties"];
        assert_eq!(entry["Type"], "STANDARD");
        assert_eq!(entry["ClusterName"]["Ref"], "ClusterName");
        assert_eq!(
            entry["KubernetesGroups"],
            json!([f.group]),
            "{}",
            entries[0]
        );
        let docs = documents(f.rbac);
        let subject =
            json!({"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": f.group});
        for (role_kind, binding_kind) in [
            ("ClusterRole", "ClusterRoleBinding"),
            ("Role", "RoleBinding"),
        ] {
            for r in by_kind(&docs, role_kind) {
                let subjects = binding_subjects(&docs, binding_kind, r);
                assert_eq!(
                    subjects,
                    std::slice::from_ref(&subject),
                    "{}: {}",
                    f.rbac,
                    r["metadata"]["name"]
                );
            }
        }
    }
}
