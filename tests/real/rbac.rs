//! Least privilege with the real authorizer: each function's identity (the group its
//! bindings in infra/rbac/ name, in a client certificate the cluster's CA signs) may make
//! every request its rules grant and no other request that any function's rules grant
//! (nor the same request by another name or in another namespace); nobody may make the
//! dangerous requests no function needs. Expectations come from the YAML, answers from
//! real requests (dry runs, or objects that do not exist, so nothing changes). Then the
//! representative requests each function's code makes are made for real.

use std::collections::BTreeSet;

use kerf_e2e::real::api::{apply_all, status};
use kerf_e2e::real::cluster::ControlPlane;
use kerf_e2e::real::invalid::nodeclaim;
use kerf_e2e::real::rbac::{Identity, Probe, Resources, forbidden_by_rbac, identities, send};
use kube::api::{Api, DeleteParams, DynamicObject, Patch, PatchParams, PostParams};
use kube::{Client, ResourceExt};
use serde_json::json;

use crate::setup;

/// Requests no function may make: `(verb, group, resource, namespace)`.
const NEVER: [(&str, &str, &str, Option<&str>); 14] = [
    ("get", "", "secrets", Some("kerf")),
    ("get", "", "secrets", Some("kube-system")),
    ("list", "", "secrets", None),
    ("create", "", "pods", Some("default")),
    ("create", "", "pods/exec", Some("default")),
    ("create", "", "serviceaccounts/token", Some("kube-system")),
    ("create", "", "nodes", None),
    ("delete", "", "namespaces", None),
    (
        "create",
        "rbac.authorization.k8s.io",
        "clusterrolebindings",
        None,
    ),
    ("update", "rbac.authorization.k8s.io", "clusterroles", None),
    (
        "delete",
        "apiextensions.k8s.io",
        "customresourcedefinitions",
        None,
    ),
    (
        "patch",
        "admissionregistration.k8s.io",
        "validatingwebhookconfigurations",
        None,
    ),
    ("delete", "karpenter.sh", "nodepools", None),
    ("delete", "karpenter.k8s.aws", "ec2nodeclasses", None),
];

fn probe(verb: &str, group: &str, resource: &str, ns: Option<&str>, name: Option<&str>) -> Probe {
    Probe {
        verb: verb.into(),
        group: group.into(),
        resource: resource.into(),
        namespace: ns.map(str::to_string),
        name: name.map(str::to_string),
    }
}

/// Every request a grant of any identity stands for, and its near misses: another name
/// than the granted ones, another namespace than a Role's.
fn universe(ids: &[Identity], r: &Resources) -> BTreeSet<Probe> {
    let mut out = BTreeSet::new();
    for g in ids.iter().flat_map(|i| &i.grants) {
        let (_, _, namespaced) = r.find(&g.group, &g.resource);
        let ns = match (&g.namespace, namespaced, g.verb.as_str()) {
            (Some(ns), _, _) => Some(ns.as_str()),
            (None, true, "list") => None,
            (None, true, _) => Some("default"),
            (None, false, _) => None,
        };
        let p =
            |ns: Option<&str>, name: Option<&str>| probe(&g.verb, &g.group, &g.resource, ns, name);
        for n in &g.names {
            out.insert(p(ns, Some(n)));
        }
        if !g.names.is_empty() {
            out.insert(p(ns, Some("not-kerfs")));
        } else {
            out.insert(p(ns, None));
        }
        if g.namespace.is_some() {
            out.insert(p(Some("default"), g.names.first().map(String::as_str)));
        }
    }
    out
}

async fn check_every_probe(cp: &ControlPlane, admin: &Client, ids: &[Identity]) {
    let resources = Resources::discover(admin).await;
    let mut all = universe(ids, &resources);
    let never: Vec<Probe> = NEVER
        .iter()
        .map(|(v, g, r, ns)| probe(v, g, r, *ns, None))
        .collect();
    all.extend(never.iter().cloned());
    let mut wrong = Vec::new();
    eprintln!("| function | request | RBAC | real authorizer |\n|---|---|---|---|");
    for id in ids {
        for p in &never {
            assert!(
                !id.allows(p),
                "infra/rbac/{}.yaml grants {p}, which no function may make",
                id.function
            );
        }
        let groups: Vec<&str> = id.groups.iter().map(String::as_str).collect();
        let client = cp.user(&id.user, &groups).await;
        for p in &all {
            let answer = send(&client, &resources, p).await;
            let allowed = !forbidden_by_rbac(&answer);
            let shown = answer
                .as_ref()
                .map_or("ok".to_string(), |s| format!("{} {}", s.code, s.reason));
            eprintln!(
                "| {} | {p} | {} | {shown} |",
                id.function,
                if id.allows(p) { "grants" } else { "-" }
            );
            if allowed != id.allows(p) {
                wrong.push(format!(
                    "{}: {p}: RBAC {} it, the real authorizer answered {shown}: {}",
                    id.function,
                    if id.allows(p) {
                        "grants"
                    } else {
                        "does not grant"
                    },
                    answer
                        .as_ref()
                        .map(|s| s.message.as_str())
                        .unwrap_or_default()
                ));
            } else if let Some(s) = answer.as_ref().filter(|_| allowed)
                && !matches!(s.code, 404 | 409 | 422)
            {
                wrong.push(format!(
                    "{}: {p}: unexpected answer {shown}: {}",
                    id.function, s.message
                ));
            }
        }
    }
    eprintln!("[real] {} identities × {} requests", ids.len(), all.len());
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

fn dynamic(client: &Client, group: &str, kind: &str, plural: &str) -> Api<DynamicObject> {
    let gvk = kube::api::GroupVersionKind::gvk(group, "v1", kind);
    Api::all_with(
        client.clone(),
        &kube::api::ApiResource::from_gvk_with_plural(&gvk, plural),
    )
}

fn claims(client: &Client) -> Api<DynamicObject> {
    dynamic(client, "karpenter.sh", "NodeClaim", "nodeclaims")
}

/// The requests each function's code makes, for real, and the policy's refusals.
async fn representative_requests(cp: &ControlPlane, admin: &Client, ids: &[Identity]) {
    let as_fn = |f: &str| {
        let id = ids
            .iter()
            .find(|i| i.function == f)
            .unwrap_or_else(|| panic!("no identity for {f}"));
        let groups: Vec<String> = id.groups.clone();
        let user = id.user.clone();
        async move {
            cp.user(
                &user,
                &groups.iter().map(String::as_str).collect::<Vec<_>>(),
            )
            .await
        }
    };
    let (prov, term, disr, intr, hook) = (
        as_fn("provisioner").await,
        as_fn("termination").await,
        as_fn("disruption").await,
        as_fn("interruption").await,
        as_fn("webhook").await,
    );
    let pp = PostParams::default();
    let reqs = json!([{"key": "karpenter.sh/nodepool", "operator": "In", "values": ["default"]}]);
    let claim: DynamicObject = serde_json::from_value(nodeclaim("rbac-claim", reqs)).unwrap();
    claims(&prov)
        .create(&pp, &claim)
        .await
        .expect("the provisioner creates a NodeClaim");
    Api::<k8s_openapi::api::core::v1::Pod>::all(prov.clone())
        .list(&Default::default())
        .await
        .expect("the provisioner lists pods");
    let label = Patch::Merge(json!({"metadata": {"labels": {"kerf.dev/rbac": "patched"}}}));
    claims(&disr)
        .patch("rbac-claim", &PatchParams::default(), &label)
        .await
        .expect("disruption patches a NodeClaim");
    let st = Patch::Merge(json!({"status": {"providerID": "aws:///us-west-2a/i-0123"}}));
    claims(&intr)
        .patch_status("rbac-claim", &PatchParams::default(), &st)
        .await
        .expect("interruption patches a NodeClaim's status");
    let listed = claims(&hook)
        .list(&Default::default())
        .await
        .expect("the webhook lists NodeClaims");
    let got = listed
        .items
        .iter()
        .find(|c| c.metadata.name.as_deref() == Some("rbac-claim"))
        .expect("the claim is listed");
    assert_eq!(
        got.labels().get("kerf.dev/rbac").map(String::as_str),
        Some("patched")
    );
    assert!(
        claims(&hook).get("rbac-claim").await.is_err(),
        "the webhook may only list NodeClaims, not get one"
    );

    let objects: Vec<serde_json::Value> = serde_json::from_value(json!([
        {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "rbac-evictee", "namespace": "default"},
            "spec": {"containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10"}]}},
        {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "rbac-node"}},
        {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "rbac-secret", "namespace": "kerf"},
            "stringData": {"k": "v"}}])).unwrap();
    apply_all(admin, &objects).await;
    let forbidden = |what: &str, r: Result<(), kube::Error>| {
        let s = status(r.expect_err(&format!("{what}: allowed")));
        assert!(
            s.code == 403 && s.message.contains(" cannot "),
            "{what}: {} {}",
            s.code,
            s.message
        );
    };
    let nodes = |c: &Client| Api::<k8s_openapi::api::core::v1::Node>::all(c.clone());
    let pods =
        |c: &Client| Api::<k8s_openapi::api::core::v1::Pod>::namespaced(c.clone(), "default");
    let dp = DeleteParams::default();
    forbidden(
        "the webhook deletes a Node",
        nodes(&hook).delete("rbac-node", &dp).await.map(|_| ()),
    );
    forbidden(
        "interruption deletes a pod",
        pods(&intr).delete("rbac-evictee", &dp).await.map(|_| ()),
    );
    let another: DynamicObject =
        serde_json::from_value(nodeclaim("rbac-claim-2", json!([]))).unwrap();
    forbidden(
        "termination creates a NodeClaim",
        claims(&term).create(&pp, &another).await.map(|_| ()),
    );
    for (f, c) in [
        ("provisioner", &prov),
        ("termination", &term),
        ("disruption", &disr),
        ("interruption", &intr),
        ("webhook", &hook),
    ] {
        let secrets = Api::<k8s_openapi::api::core::v1::Secret>::namespaced(c.clone(), "kerf");
        forbidden(
            &format!("{f} reads a Secret"),
            secrets.get("rbac-secret").await.map(|_| ()),
        );
    }
    pods(&term)
        .evict("rbac-evictee", &Default::default())
        .await
        .expect("termination evicts a pod");
    nodes(&term)
        .delete("rbac-node", &dp)
        .await
        .expect("termination deletes a Node");
    claims(&prov)
        .delete("rbac-claim", &dp)
        .await
        .expect("the provisioner deletes a NodeClaim");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_function_may_make_its_requests_and_no_other() {
    let cp = ControlPlane::up("rbac").await;
    let admin = cp.admin().await;
    setup::install_crds(&admin).await;
    setup::install_rbac(&admin).await;
    let ids = identities(&setup::rbac_files());
    let functions: Vec<&str> = ids.iter().map(|i| i.function.as_str()).collect();
    assert_eq!(
        functions,
        [
            "disruption",
            "interruption",
            "provisioner",
            "termination",
            "webhook"
        ]
    );
    for id in &ids {
        assert_eq!(
            id.groups,
            [format!("kerf:{}", id.function)],
            "{}: bound groups",
            id.function
        );
    }
    check_every_probe(&cp, &admin, &ids).await;
    representative_requests(&cp, &admin, &ids).await;
}
