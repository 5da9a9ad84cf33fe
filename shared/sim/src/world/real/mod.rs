//! The world on a REAL Kubernetes control plane (kube-apiserver, etcd, kube-controller-manager,
//! kube-scheduler and KWOK, reached through a kubeconfig) instead of the in-process server:
//! the real scheduler binds the pods, the real controllers run Deployments, ReplicaSets,
//! PodDisruptionBudgets and garbage collection, KWOK plays the kubelets. What stays simulated
//! is what a control plane does not have: EC2 ([`super::SimCloud`]), the queues and the
//! instances' kubelets registering their Nodes ([`bridge`]).
//!
//! Kerf's side is wired as a user installs it: the CRDs and RBAC from `infra/` ([`install`]),
//! each function under its own identity (impersonated through the kubeconfig's user, so the
//! real authorizer checks every request against Kerf's RBAC), and the webhook served over
//! HTTPS on 127.0.0.1 ([`webhook`]) with the configurations `kerf webhooks` prints.
//!
//! Time is the wall clock: the control plane cannot be sped up, so a simulated minute takes a
//! minute here.

pub mod bridge;
pub mod install;
pub mod webhook;

use std::path::{Path, PathBuf};

use kube::Client;
use kube::config::{KubeConfigOptions, Kubeconfig};

use super::WorldError;

/// A connection to a real control plane.
pub struct RealCluster {
    /// The kubeconfig it was reached through.
    pub kubeconfig: PathBuf,
    config: kube::Config,
    /// A client as the kubeconfig's user.
    pub admin: Client,
    /// The kubelets of the simulated instances.
    pub bridge: bridge::KubeletBridge,
    /// Kerf's webhook, once served.
    pub webhook: Option<webhook::WebhookServer>,
}

impl std::fmt::Debug for RealCluster {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RealCluster")
            .field("kubeconfig", &self.kubeconfig)
            .finish_non_exhaustive()
    }
}

fn kubeconfig_error(path: &Path, e: impl std::fmt::Display) -> WorldError {
    WorldError::Cluster(format!("{}: {e}", path.display()))
}

/// The user's side of a control plane (applying a scenario's manifests, reading what
/// happened) from a kubeconfig's current context: it retries a 429 or 503 after the server's
/// Retry-After, as kubectl does. Checks that the API server answers.
pub async fn user_client(path: &Path) -> Result<(Client, kube::Config), WorldError> {
    let kc = Kubeconfig::read_from(path).map_err(|e| kubeconfig_error(path, e))?;
    let mut config = kube::Config::from_custom_kubeconfig(kc, &KubeConfigOptions::default())
        .await
        .map_err(|e| kubeconfig_error(path, e))?;
    config.connect_timeout = Some(std::time::Duration::from_secs(10));
    config.read_timeout = Some(std::time::Duration::from_secs(60));
    config.default_retry = true;
    let client = Client::try_from(config.clone()).map_err(|e| kubeconfig_error(path, e))?;
    client.apiserver_version().await.map_err(|e| {
        WorldError::Cluster(format!(
            "{}: the API server at {} does not answer: {e}",
            path.display(),
            config.cluster_url
        ))
    })?;
    Ok((client, config))
}

impl RealCluster {
    /// Reads the kubeconfig (its current context) and checks that the API server answers.
    pub async fn connect(path: &Path) -> Result<RealCluster, WorldError> {
        let (admin, mut config) = user_client(path).await?;
        // As the functions' clients in Lambda: no client-side retries, so a 429 (an eviction a
        // PodDisruptionBudget refuses) comes back at once instead of being retried for minutes.
        config.default_retry = false;
        Ok(RealCluster {
            kubeconfig: path.to_path_buf(),
            config,
            admin,
            bridge: bridge::KubeletBridge::default(),
            webhook: None,
        })
    }

    /// A client as `user` in `groups`, impersonated by the kubeconfig's user (who must be
    /// allowed to impersonate: a cluster admin is).
    pub fn client_as(&self, user: &str, groups: &[String]) -> Result<Client, WorldError> {
        let mut config = self.config.clone();
        config.auth_info.impersonate = Some(user.to_string());
        config.auth_info.impersonate_groups = Some(groups.to_vec());
        Client::try_from(config).map_err(|e| kubeconfig_error(&self.kubeconfig, e))
    }
}
