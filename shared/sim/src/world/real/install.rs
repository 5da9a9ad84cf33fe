//! Kerf installed on a real control plane as a user installs it: the CRDs (`infra/crds/`,
//! applied server-side and waited for until NodePools are served) and the RBAC
//! (`infra/rbac/`, the namespace first), both compiled into this crate; and the identity each
//! function's RBAC binds (the group its EKS access entry maps it to).

use std::time::{Duration, Instant};

use kerf_api::v1::{EC2NodeClass, NodeClaim, NodePool};
use kube::Client;
use kube::api::{Api, ListParams};
use serde_json::Value;

use super::super::WorldError;
use super::super::wiring::{apply, documents};

/// Kerf's CRDs, as `infra/crds/` holds them.
const CRDS: [(&str, &str); 4] = [
    (
        "infra/crds/karpenter.sh_nodepools.yaml",
        include_str!("../../../../../infra/crds/karpenter.sh_nodepools.yaml"),
    ),
    (
        "infra/crds/karpenter.sh_nodeclaims.yaml",
        include_str!("../../../../../infra/crds/karpenter.sh_nodeclaims.yaml"),
    ),
    (
        "infra/crds/karpenter.k8s.aws_ec2nodeclasses.yaml",
        include_str!("../../../../../infra/crds/karpenter.k8s.aws_ec2nodeclasses.yaml"),
    ),
    (
        "infra/crds/karpenter.sh_nodeoverlays.yaml",
        include_str!("../../../../../infra/crds/karpenter.sh_nodeoverlays.yaml"),
    ),
];

/// Kerf's RBAC, as `infra/rbac/` holds it: the namespace first, then each function's file.
const RBAC: [(&str, &str); 6] = [
    (
        "namespace",
        include_str!("../../../../../infra/rbac/00-namespace.yaml"),
    ),
    (
        "provisioner",
        include_str!("../../../../../infra/rbac/provisioner.yaml"),
    ),
    (
        "webhook",
        include_str!("../../../../../infra/rbac/webhook.yaml"),
    ),
    (
        "termination",
        include_str!("../../../../../infra/rbac/termination.yaml"),
    ),
    (
        "disruption",
        include_str!("../../../../../infra/rbac/disruption.yaml"),
    ),
    (
        "interruption",
        include_str!("../../../../../infra/rbac/interruption.yaml"),
    ),
];

/// How long the CRDs may take to be served.
const SERVED_WITHIN: Duration = Duration::from_secs(60);

/// One of Kerf's five functions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Function {
    Provisioner,
    Webhook,
    Termination,
    Disruption,
    Interruption,
}

impl Function {
    /// The name of its RBAC file (`infra/rbac/<name>.yaml`).
    pub fn name(self) -> &'static str {
        match self {
            Function::Provisioner => "provisioner",
            Function::Webhook => "webhook",
            Function::Termination => "termination",
            Function::Disruption => "disruption",
            Function::Interruption => "interruption",
        }
    }
}

/// A Kubernetes identity: user and groups.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identity {
    pub user: String,
    pub groups: Vec<String>,
}

/// The identity the bindings of one RBAC file grant: its bound User, or `kerf-<stem>` when
/// only Groups are bound, with every bound Group.
pub fn identity(stem: &str, docs: &[Value]) -> Identity {
    let mut id = Identity {
        user: format!("kerf-{stem}"),
        groups: Vec::new(),
    };
    let bindings = docs.iter().filter(|d| {
        matches!(
            d["kind"].as_str(),
            Some("ClusterRoleBinding" | "RoleBinding")
        )
    });
    for s in bindings.flat_map(|b| b["subjects"].as_array().into_iter().flatten()) {
        let name = s["name"].as_str().unwrap_or_default().to_string();
        match s["kind"].as_str() {
            Some("Group") if !id.groups.contains(&name) => id.groups.push(name),
            Some("User") => id.user = name,
            _ => {}
        }
    }
    id
}

/// The identity Kerf's RBAC gives `f`.
pub fn function_identity(f: Function) -> Result<Identity, WorldError> {
    let (stem, text) = RBAC
        .iter()
        .find(|(stem, _)| *stem == f.name())
        .ok_or_else(|| WorldError::Cluster(format!("no RBAC for the {} function", f.name())))?;
    let id = identity(stem, &documents(text)?);
    if id.groups.is_empty() {
        return Err(WorldError::Cluster(format!(
            "infra/rbac/{stem}.yaml binds no group"
        )));
    }
    Ok(id)
}

/// Applies the CRDs and waits until NodePools are served; then the RBAC.
pub async fn install(admin: &Client) -> Result<(), WorldError> {
    for (file, text) in CRDS {
        apply(admin, text)
            .await
            .map_err(|e| WorldError::Cluster(format!("{file}: {e}")))?;
    }
    served(admin).await?;
    for (stem, text) in RBAC {
        apply(admin, text)
            .await
            .map_err(|e| WorldError::Cluster(format!("infra/rbac/{stem}.yaml: {e}")))?;
    }
    Ok(())
}

/// Waits until a list of each of Kerf's kinds answers (the CRDs are Established and their
/// storage is ready: until then kube-apiserver answers 429 "storage is (re)initializing").
async fn served(admin: &Client) -> Result<(), WorldError> {
    let start = Instant::now();
    loop {
        let lp = ListParams::default().limit(1);
        let (pools, claims, classes) = (
            Api::<NodePool>::all(admin.clone()),
            Api::<NodeClaim>::all(admin.clone()),
            Api::<EC2NodeClass>::all(admin.clone()),
        );
        let lists = tokio::try_join!(pools.list(&lp), claims.list(&lp), classes.list(&lp));
        match lists {
            Ok(_) => return Ok(()),
            Err(e) if start.elapsed() >= SERVED_WITHIN => {
                return Err(WorldError::Cluster(format!(
                    "Kerf's CRDs not served within {SERVED_WITHIN:?}: {e}"
                )));
            }
            Err(_) => tokio::time::sleep(Duration::from_millis(200)).await,
        }
    }
}
