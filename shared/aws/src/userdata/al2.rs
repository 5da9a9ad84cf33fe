//! AL2 user data: a MIME archive, the EC2NodeClass `userData` parts first (a bare script
//! becomes one shell part), then the `/etc/eks/bootstrap.sh` call Karpenter writes, whose
//! `--kubelet-extra-args` register the node with its labels and taints.

use super::kubelet::extra_args;
use super::mime::{self, Part, SHELL};
use super::{ClusterInfo, NodeBootstrap};

/// The bootstrap script.
pub fn script(cluster: &ClusterInfo, node: &NodeBootstrap) -> String {
    let mut s = String::from("#!/bin/bash -xe\n");
    s.push_str("exec > >(tee /var/log/user-data.log|logger -t user-data -s 2>/dev/console) 2>&1\n");
    s.push_str(&format!(
        "/etc/eks/bootstrap.sh '{}' --apiserver-endpoint '{}' --b64-cluster-ca '{}'",
        cluster.name, cluster.endpoint, cluster.certificate_authority
    ));
    let dns = node.cluster_dns();
    if dns.is_some_and(|ip| ip.contains(':')) {
        s.push_str(" \\\n--ip-family ipv6");
    }
    if let Some(ip) = dns {
        s.push_str(&format!(" \\\n--dns-cluster-ip '{ip}'"));
    }
    if node.max_pods.is_some() {
        s.push_str(" \\\n--use-max-pods false");
    }
    s.push_str(&format!(
        " \\\n--kubelet-extra-args '{}'",
        extra_args(node).join(" ")
    ));
    if node.raid0 {
        s.push_str(" \\\n--local-disks raid0");
    }
    s
}

/// The final user data: the user's parts first, then the bootstrap script.
pub fn user_data(cluster: &ClusterInfo, node: &NodeBootstrap, user_data: Option<&str>) -> String {
    let mut parts = mime::user_parts(user_data.unwrap_or_default(), |_| SHELL);
    parts.push(Part {
        content_type: SHELL.into(),
        body: script(cluster, node),
    });
    mime::archive(&parts)
}
