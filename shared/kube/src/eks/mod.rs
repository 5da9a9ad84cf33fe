//! EKS authentication: STS-presigned bearer tokens (always built) and, with the `eks`
//! feature, cluster discovery through DescribeCluster plus a self-refreshing client.

#[cfg(feature = "eks")]
pub mod provider;
pub mod token;

pub use token::{EksToken, token};
