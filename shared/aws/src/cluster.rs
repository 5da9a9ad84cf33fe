//! EKS DescribeCluster: the endpoint, CA, service CIDR and Kubernetes version nodes need.

use crate::error::{AwsError, from_sdk};
use crate::userdata::ClusterInfo;

/// The cluster's join facts and its Kubernetes version (`1.31`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cluster {
    pub info: ClusterInfo,
    pub version: String,
}

/// Describes the cluster.
pub async fn describe(eks: &aws_sdk_eks::Client, name: &str) -> Result<Cluster, AwsError> {
    let out = eks
        .describe_cluster()
        .name(name)
        .send()
        .await
        .map_err(|e| from_sdk("DescribeCluster", e))?;
    let c = out
        .cluster()
        .ok_or_else(|| AwsError::bad_response("DescribeCluster", "no cluster"))?;
    let net = c.kubernetes_network_config();
    Ok(Cluster {
        info: ClusterInfo {
            name: name.to_string(),
            endpoint: c.endpoint().unwrap_or_default().to_string(),
            certificate_authority: c
                .certificate_authority()
                .and_then(|ca| ca.data())
                .unwrap_or_default()
                .to_string(),
            service_cidr: net
                .and_then(|n| n.service_ipv4_cidr().or(n.service_ipv6_cidr()))
                .map(str::to_string),
        },
        version: c.version().unwrap_or_default().to_string(),
    })
}
