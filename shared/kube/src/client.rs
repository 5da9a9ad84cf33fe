//! The Cluster port implemented on `kube::Client`, and client construction from an
//! endpoint, a CA bundle and a bearer token (client-side retries off: see kube-testing §4).

use crate::error::ClusterError;
use crate::port::{
    Cluster, Deleted, EventSpec, Evicted, LeaseOutcome, LeaseRequest, Snapshot, Target,
};
use crate::snapshot::{self, SnapshotOptions};
use crate::{claims, events, evict, lease, nodes, write};
use base64::Engine;
use k8s_openapi::api::core::v1::{Node, Taint};
use kerf_api::v1::{Condition, NodeClaim, NodeClaimStatus, NodePool};
use kube::Client;
use kube::api::Api;
use std::time::Duration;

/// Builds a client for `endpoint` trusting the base64-encoded PEM bundle `ca_data_b64`
/// (as EKS DescribeCluster and kubeconfig `certificate-authority-data` give it).
pub fn client_for(endpoint: &str, ca_data_b64: &str, token: &str) -> Result<Client, ClusterError> {
    let fatal = |e: &dyn std::fmt::Display| ClusterError::Fatal(e.to_string());
    let pem = base64::engine::general_purpose::STANDARD
        .decode(ca_data_b64.trim())
        .map_err(|e| fatal(&e))?;
    let pem = String::from_utf8(pem).map_err(|e| fatal(&e))?;
    let mut config = kube::Config::new(endpoint.parse().map_err(|e| fatal(&e))?);
    config.root_cert = Some(pem_certificates(&pem).map_err(|e| fatal(&e))?);
    config.auth_info.token = Some(secrecy::SecretString::from(token.to_string()));
    config.default_retry = false;
    config.connect_timeout = Some(Duration::from_secs(10));
    config.read_timeout = Some(Duration::from_secs(60));
    Client::try_from(config).map_err(|e| fatal(&e))
}

/// DER bodies of every certificate in a PEM bundle.
pub fn pem_certificates(pem: &str) -> Result<Vec<Vec<u8>>, base64::DecodeError> {
    let mut out = Vec::new();
    let mut current: Option<String> = None;
    for line in pem.lines().map(str::trim) {
        if line.starts_with("-----BEGIN") {
            current = Some(String::new());
        } else if line.starts_with("-----END") {
            if let Some(b64) = current.take() {
                out.push(base64::engine::general_purpose::STANDARD.decode(b64)?);
            }
        } else if let Some(buf) = current.as_mut() {
            buf.push_str(line);
        }
    }
    Ok(out)
}

impl Cluster for Client {
    async fn snapshot(&self) -> Result<Snapshot, ClusterError> {
        snapshot::read(self, &SnapshotOptions::default()).await
    }

    async fn create_node_claim(
        &self,
        pool: &NodePool,
        claim: NodeClaim,
    ) -> Result<NodeClaim, ClusterError> {
        claims::create(self, pool, claim).await
    }

    async fn patch_node_claim_status(
        &self,
        name: &str,
        resource_version: Option<&str>,
        status: &NodeClaimStatus,
    ) -> Result<NodeClaim, ClusterError> {
        claims::patch_status(self, name, resource_version, status).await
    }

    async fn set_node_claim_conditions(
        &self,
        name: &str,
        conditions: &[Condition],
    ) -> Result<NodeClaim, ClusterError> {
        claims::set_conditions(self, name, conditions).await
    }

    async fn delete_node_claim(
        &self,
        name: &str,
        uid: Option<&str>,
    ) -> Result<Deleted, ClusterError> {
        write::delete(&Api::<NodeClaim>::all(self.clone()), name, uid).await
    }

    async fn taint_node(&self, node: &str, taint: &Taint) -> Result<Node, ClusterError> {
        nodes::taint(self, node, taint).await
    }

    async fn untaint_node(&self, node: &str, key: &str) -> Result<Node, ClusterError> {
        nodes::untaint(self, node, key).await
    }

    async fn cordon_node(&self, node: &str, unschedulable: bool) -> Result<Node, ClusterError> {
        nodes::cordon(self, node, unschedulable).await
    }

    async fn delete_node(&self, name: &str, uid: Option<&str>) -> Result<Deleted, ClusterError> {
        write::delete(&Api::<Node>::all(self.clone()), name, uid).await
    }

    async fn evict_pod(
        &self,
        namespace: &str,
        name: &str,
        uid: Option<&str>,
    ) -> Result<Evicted, ClusterError> {
        evict::evict(self, namespace, name, uid).await
    }

    async fn add_finalizer(&self, target: &Target, finalizer: &str) -> Result<(), ClusterError> {
        match target {
            Target::Node(n) => {
                write::add_finalizer(&Api::<Node>::all(self.clone()), n, finalizer).await
            }
            Target::NodeClaim(n) => {
                write::add_finalizer(&Api::<NodeClaim>::all(self.clone()), n, finalizer).await
            }
        }
    }

    async fn remove_finalizer(
        &self,
        target: &Target,
        finalizer: &str,
        rv: Option<&str>,
    ) -> Result<(), ClusterError> {
        match target {
            Target::Node(n) => {
                write::remove_finalizer(&Api::<Node>::all(self.clone()), n, finalizer, rv).await
            }
            Target::NodeClaim(n) => {
                write::remove_finalizer(&Api::<NodeClaim>::all(self.clone()), n, finalizer, rv)
                    .await
            }
        }
    }

    async fn emit_event(&self, event: &EventSpec) -> Result<(), ClusterError> {
        events::emit(self, event).await
    }

    async fn acquire_lease(&self, req: &LeaseRequest) -> Result<LeaseOutcome, ClusterError> {
        lease::acquire(self, req).await
    }

    async fn release_lease(&self, req: &LeaseRequest) -> Result<(), ClusterError> {
        lease::release(self, req).await
    }
}
