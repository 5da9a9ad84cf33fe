//! A `kube::Client` for an EKS cluster, discovered with DescribeCluster and rebuilt with a
//! fresh token once the current one is [`REFRESH_AFTER`](super::token::REFRESH_AFTER) old.

pub use aws_config;
pub use aws_sdk_eks;

use super::token::{EksToken, token};
use crate::client::client_for;
use crate::error::ClusterError;
use aws_credential_types::provider::{ProvideCredentials, SharedCredentialsProvider};
use std::time::SystemTime;
use tokio::sync::Mutex;

/// Endpoint and CA of a cluster, as DescribeCluster returns them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClusterEndpoint {
    /// `https://….eks.amazonaws.com`.
    pub endpoint: String,
    /// Base64 of the PEM CA bundle.
    pub ca_data: String,
}

fn fatal(e: impl std::fmt::Display) -> ClusterError {
    ClusterError::Fatal(format!("eks: {e}"))
}

/// Looks the cluster's endpoint and CA up.
pub async fn describe(
    eks: &aws_sdk_eks::Client,
    cluster: &str,
) -> Result<ClusterEndpoint, ClusterError> {
    let out = eks
        .describe_cluster()
        .name(cluster)
        .send()
        .await
        .map_err(|e| ClusterError::Transient(format!("DescribeCluster: {e}")))?;
    let c = out
        .cluster()
        .ok_or_else(|| fatal("DescribeCluster returned no cluster"))?;
    let endpoint = c
        .endpoint()
        .ok_or_else(|| fatal("cluster has no endpoint"))?
        .to_string();
    let ca_data = c
        .certificate_authority()
        .and_then(|ca| ca.data())
        .ok_or_else(|| fatal("cluster has no certificate authority"))?
        .to_string();
    Ok(ClusterEndpoint { endpoint, ca_data })
}

struct Cached {
    client: kube::Client,
    token: EksToken,
}

/// Hands out a client whose token is never older than ten minutes.
pub struct EksClientProvider {
    eks: aws_sdk_eks::Client,
    credentials: SharedCredentialsProvider,
    region: String,
    cluster: String,
    endpoint: Mutex<Option<ClusterEndpoint>>,
    cached: Mutex<Option<Cached>>,
}

impl std::fmt::Debug for EksClientProvider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EksClientProvider")
            .field("region", &self.region)
            .field("cluster", &self.cluster)
            .finish()
    }
}

impl EksClientProvider {
    /// From the Lambda's AWS config and the cluster name.
    pub fn new(sdk: &aws_config::SdkConfig, cluster: &str) -> Result<Self, ClusterError> {
        let credentials = sdk
            .credentials_provider()
            .ok_or_else(|| fatal("no credentials provider"))?;
        let region = sdk.region().ok_or_else(|| fatal("no region"))?.to_string();
        Ok(Self {
            eks: aws_sdk_eks::Client::new(sdk),
            credentials,
            region,
            cluster: cluster.to_string(),
            endpoint: Mutex::new(None),
            cached: Mutex::new(None),
        })
    }

    async fn endpoint(&self) -> Result<ClusterEndpoint, ClusterError> {
        let mut guard = self.endpoint.lock().await;
        if let Some(e) = guard.as_ref() {
            return Ok(e.clone());
        }
        let e = describe(&self.eks, &self.cluster).await?;
        *guard = Some(e.clone());
        Ok(e)
    }

    /// A client with a token younger than ten minutes.
    pub async fn client(&self) -> Result<kube::Client, ClusterError> {
        let now = SystemTime::now();
        let mut guard = self.cached.lock().await;
        if let Some(c) = guard.as_ref().filter(|c| !c.token.needs_refresh(now)) {
            return Ok(c.client.clone());
        }
        let ep = self.endpoint().await?;
        let creds = self
            .credentials
            .provide_credentials()
            .await
            .map_err(|e| ClusterError::Transient(format!("credentials: {e}")))?;
        let token = token(&creds, &self.region, &self.cluster, now)?;
        let client = client_for(&ep.endpoint, &ep.ca_data, &token.token)?;
        *guard = Some(Cached {
            client: client.clone(),
            token,
        });
        Ok(client)
    }
}
