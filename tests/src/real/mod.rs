//! Kerf against a REAL Kubernetes control plane (`scripts/cluster.sh`: etcd, kube-apiserver,
//! kube-controller-manager, kube-scheduler, KWOK): a guard that starts one and always stops
//! it, clients as any identity the cluster's CA signs, server-side apply, the functions'
//! contexts over the real API server with the simulated EC2, and a kubelet bridge that
//! registers the Nodes of running simulated instances as their kubelets would.
//!
//! Test support: a failure to set up panics the test that asked for it.

pub mod api;
pub mod cluster;
pub mod conformance;
pub mod functions;
pub mod invalid;
pub mod invalid_classes;
pub mod kubelet;
pub mod rbac;
pub mod replay;
pub mod webhook;

use std::future::Future;
use std::time::{Duration, Instant};

/// Polls `check` every `every` until it returns `Ok`, or panics naming `what` and the last
/// `Err` (the state it saw) once `within` has passed.
pub async fn eventually<T, F, Fut>(what: &str, within: Duration, every: Duration, mut check: F) -> T
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, String>>,
{
    let deadline = Instant::now() + within;
    loop {
        match check().await {
            Ok(v) => return v,
            Err(state) if Instant::now() >= deadline => {
                panic!("{what}: not within {within:?}; last state: {state}")
            }
            Err(_) => tokio::time::sleep(every).await,
        }
    }
}
