//! Kerf's Kubernetes API types: Karpenter's `karpenter.sh/v1` NodePool and NodeClaim and
//! `karpenter.k8s.aws/v1` EC2NodeClass, their CRDs, and migration of legacy documents
//! (v1alpha5 Provisioner, v1alpha1 AWSNodeTemplate, v1beta1 NodePool / EC2NodeClass) to v1, and
//! `karpenter.sh/v1alpha1` NodeOverlay.
//!
//! Only types and derives: no client, no runtime, no I/O.

pub mod crds;
pub mod error;
pub mod legacy;
pub mod migrate;
pub mod restricted;
pub mod v1;
pub mod v1alpha1;

pub use error::ApiError;
pub use migrate::{MigrateOutput, migrate_documents};
