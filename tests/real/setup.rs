//! What every real-cluster test installs first, as a user installs Kerf: the CRDs
//! (infra/crds/, until Established and served) and the RBAC (infra/rbac/, the namespace
//! first).

use std::time::Duration;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kerf_e2e::real::api::{apply, apply_all};
use kerf_e2e::real::cluster::ControlPlane;
use kerf_e2e::real::eventually;
use kerf_e2e::real::invalid::nodepool;
use kerf_e2e::real::rbac::identities;
use kube::{Api, Client};
use serde_json::Value;

use crate::yaml;

/// Applies infra/crds/*.yaml and waits until every CRD is Established and NodePools can
/// be written; returns the CRDs' names.
pub async fn install_crds(admin: &Client) -> Vec<String> {
    let crds: Vec<Value> = yaml::dir("infra/crds")
        .into_iter()
        .flat_map(|(_, d)| d)
        .collect();
    assert!(crds.len() >= 3, "infra/crds holds {} CRDs", crds.len());
    apply_all(admin, &crds).await;
    let names: Vec<String> = crds
        .iter()
        .map(|c| c["metadata"]["name"].as_str().unwrap().to_string())
        .collect();
    let api: Api<CustomResourceDefinition> = Api::all(admin.clone());
    for name in &names {
        let (api, name) = (api.clone(), name.clone());
        eventually(
            &format!("CRD {name} Established"),
            Duration::from_secs(30),
            Duration::from_millis(200),
            || {
                let (api, name) = (api.clone(), name.clone());
                async move {
                    let crd = api.get(&name).await.map_err(|e| e.to_string())?;
                    let conds = crd.status.and_then(|s| s.conditions).unwrap_or_default();
                    conds
                        .iter()
                        .find(|c| c.type_ == "Established" && c.status == "True")
                        .map(|_| ())
                        .ok_or_else(|| format!("{conds:?}"))
                }
            },
        )
        .await;
    }
    // Established, yet discovery and the handlers may still be catching up.
    let probe = nodepool("kerf-served-probe");
    eventually(
        "NodePools served",
        Duration::from_secs(30),
        Duration::from_millis(200),
        || {
            let (admin, probe) = (admin.clone(), probe.clone());
            async move {
                apply(&admin, &probe, true)
                    .await
                    .map(|_| ())
                    .map_err(|e| e.to_string())
            }
        },
    )
    .await;
    names
}

/// `(file stem, documents)` of infra/rbac/*.yaml, the namespace first.
pub fn rbac_files() -> Vec<(String, Vec<Value>)> {
    let mut files = yaml::dir("infra/rbac");
    files
        .sort_by_key(|(stem, docs)| (!docs.iter().any(|d| d["kind"] == "Namespace"), stem.clone()));
    files
}

/// Applies infra/rbac/*.yaml, the namespace first.
pub async fn install_rbac(admin: &Client) {
    for (_, docs) in rbac_files() {
        apply_all(admin, &docs).await;
    }
}

/// A client as a function's identity (its user and groups in infra/rbac/).
pub async fn function(cp: &ControlPlane, name: &str) -> Client {
    let ids = identities(&rbac_files());
    let id = ids.iter().find(|i| i.function == name).unwrap();
    let groups: Vec<&str> = id.groups.iter().map(String::as_str).collect();
    cp.user(&id.user, &groups).await
}

/// A control plane of its own named `name` with Kerf installed (CRDs, RBAC) and the
/// getting-started NodePool and EC2NodeClass applied; and its admin client.
pub async fn getting_started(name: &str) -> (ControlPlane, Client) {
    let cp = ControlPlane::up(name).await;
    let admin = cp.admin().await;
    install_crds(&admin).await;
    install_rbac(&admin).await;
    apply_all(
        &admin,
        &yaml::file("examples/getting-started/nodepool.yaml"),
    )
    .await;
    (cp, admin)
}
