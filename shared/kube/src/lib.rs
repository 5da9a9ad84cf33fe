//! Kerf's Cluster port on kube-rs.
//!
//! The control layer's `Cluster` port is everything Kerf does with the Kubernetes API: one
//! snapshot read ([`snapshot`]), and idempotent, resourceVersion-conditional writers for
//! NodeClaims, Nodes, finalizers, evictions, Events and the leader Lease. [`KubeCluster`]
//! implements it on `kube::Client`; [`client_for`] builds one from an endpoint, CA bundle and
//! bearer token with client-side retries off (a PodDisruptionBudget's 429 must reach the
//! caller at once), and [`eks`] makes EKS tokens. [`offerings`] keeps the unavailable-offerings
//! cache in a ConfigMap. kube-rs errors are classified into the port's `ClusterError` by
//! [`error::classify`], typed by what to do.

pub mod claims;
pub mod client;
pub mod cluster;
#[cfg(feature = "token")]
pub mod eks;
pub mod error;
pub mod events;
pub mod evict;
pub mod lease;
pub mod nodes;
pub mod offerings;
pub mod pods;
pub mod retry;
pub mod snapshot;
pub mod write;

pub use client::client_for;
pub use cluster::KubeCluster;
pub use kerf_control::ports::{
    Cluster, ClusterError, Deleted, EventReason, EventSpec, EventType, Evicted, InvolvedObject,
    LeaseOutcome, LeaseRequest, Snapshot, Target,
};
pub use offerings::ConfigMapOfferingStore;
