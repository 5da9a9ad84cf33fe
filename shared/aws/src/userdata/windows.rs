//! Windows user data: one PowerShell block, the EC2NodeClass `userData` first, then the
//! `Start-EKSBootstrap.ps1` call Karpenter writes, whose `-KubeletExtraArgs` register the
//! node with its labels and taints.

use super::kubelet::extra_args;
use super::{ClusterInfo, NodeBootstrap};

/// The final user data.
pub fn user_data(cluster: &ClusterInfo, node: &NodeBootstrap, user_data: Option<&str>) -> String {
    let mut s = String::from("<powershell>\n");
    if let Some(u) = user_data.filter(|u| !u.is_empty()) {
        s.push_str(u);
        s.push('\n');
    }
    s.push_str(
        "[string]$EKSBootstrapScriptFile = \"$env:ProgramFiles\\Amazon\\EKS\\Start-EKSBootstrap.ps1\"\n",
    );
    s.push_str(&format!(
        "& $EKSBootstrapScriptFile -EKSClusterName '{}' -APIServerEndpoint '{}' -Base64ClusterCA '{}'",
        cluster.name, cluster.endpoint, cluster.certificate_authority
    ));
    s.push_str(&format!(
        " -KubeletExtraArgs '{}'",
        extra_args(node).join(" ")
    ));
    if let Some(ip) = node.cluster_dns() {
        s.push_str(&format!(" -DNSClusterIP '{ip}'"));
    }
    s.push_str("\n</powershell>");
    s
}
