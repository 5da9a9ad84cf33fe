//! The kubelet bridge for tests that drive Kerf's functions on a real control plane without a
//! world: the world's own bridge (`kerf_sim::world::real::bridge`: each running instance's
//! Node created as the node's own identity, handed to KWOK) over a connection to the control
//! plane, with Nodes registered as soon as their instances run.

use jiff::{SignedDuration, Timestamp};
use kerf_sim::world::SimCloud;
use kerf_sim::world::real::RealCluster;

use super::cluster::ControlPlane;

/// The taint every Kerf node registers with until Kerf registers it.
pub const UNREGISTERED_TAINT: &str = "karpenter.sh/unregistered";

/// The bridge and its connection.
#[derive(Debug)]
pub struct KubeletBridge {
    cluster: RealCluster,
}

impl KubeletBridge {
    /// A bridge to `cp`, as its admin.
    pub async fn new(cp: &ControlPlane) -> KubeletBridge {
        let cluster = RealCluster::connect(&cp.admin_kubeconfig())
            .await
            .unwrap_or_else(|e| panic!("the kubelet bridge to {}: {e}", cp.name));
        KubeletBridge { cluster }
    }

    /// Registers the Node of every running instance not registered yet; returns the names
    /// of the Nodes created.
    pub async fn step(&mut self, cloud: &SimCloud) -> Vec<String> {
        let report = self
            .cluster
            .kubelets(cloud, Timestamp::now(), SignedDuration::ZERO)
            .await
            .unwrap_or_else(|e| panic!("the kubelet bridge: {e}"));
        report.registered
    }
}
