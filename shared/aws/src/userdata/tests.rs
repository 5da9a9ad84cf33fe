//! User data per AMI family, checked against the shape Karpenter's provider writes for the
//! same EC2NodeClass.

use std::collections::BTreeMap;

use kerf_catalog::AmiFamily;
use serde_json::{Map, json};

use super::*;

fn cluster() -> ClusterInfo {
    ClusterInfo {
        name: "demo".into(),
        endpoint: "https://ABC.gr7.us-west-2.eks.amazonaws.com".into(),
        certificate_authority: "Q0E=".into(),
        service_cidr: Some("10.100.0.0/16".into()),
    }
}

fn node() -> NodeBootstrap {
    NodeBootstrap {
        labels: BTreeMap::from([("karpenter.sh/nodepool".into(), "default".into())]),
        taints: vec![Taint {
            key: "gpu".into(),
            value: Some("true".into()),
            effect: "NoSchedule".into(),
        }],
        max_pods: Some(29),
        kubelet: Map::from_iter([("clusterDNS".to_string(), json!(["10.100.0.10"]))]),
        raid0: false,
    }
}

fn render_ok(family: AmiFamily, n: &NodeBootstrap, user: Option<&str>) -> String {
    render(family, &cluster(), n, user).unwrap()
}

#[test]
fn al2023_node_config_has_cluster_taints_and_labels() {
    let ud = render_ok(AmiFamily::AL2023, &node(), None);
    assert!(ud.starts_with("MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary=\"//\""));
    assert!(ud.contains("\"apiServerEndpoint\": \"https://ABC.gr7.us-west-2.eks.amazonaws.com\""));
    assert!(ud.contains("\"cidr\": \"10.100.0.0/16\""));
    assert!(ud.contains("\"maxPods\": 29"));
    assert!(ud.contains("\"key\": \"karpenter.sh/unregistered\"\n"));
    assert!(ud.contains("\"registerWithTaints\":\n"));
    assert!(ud.contains("\"effect\": \"NoExecute\""));
    assert!(ud.contains(
        "--node-labels=\\\"karpenter.sh/do-not-sync-taints=true,karpenter.sh/nodepool=default\\\""
    ));
    assert!(!ud.contains("localStorage"));
    assert!(ud.ends_with("--//--\n"));
}

#[test]
fn al2023_user_parts_come_first_and_raid0_is_nodeadms_local_storage() {
    let n = NodeBootstrap {
        raid0: true,
        ..node()
    };
    let ud = render_ok(AmiFamily::AL2023, &n, Some("#!/bin/bash\necho hi"));
    assert!(ud.find("echo hi").unwrap() < ud.find("kind").unwrap());
    assert!(ud.contains("Content-Type: text/x-shellscript"));
    assert!(ud.contains("\"localStorage\":\n      \"strategy\": \"RAID0\""));
}

#[test]
fn mime_user_data_is_split_into_its_parts() {
    let doc = "MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary=\"BOUND\"\n\n--BOUND\nContent-Type: text/x-shellscript\n\necho one\n--BOUND\nContent-Type: application/node.eks.aws\n\napiVersion: node.eks.aws/v1alpha1\nkind: NodeConfig\n--BOUND--\n";
    let parts = mime::user_parts(doc, |_| mime::SHELL);
    assert_eq!(parts.len(), 2);
    assert_eq!(parts[0].body, "echo one");
    assert_eq!(parts[1].content_type, "application/node.eks.aws");
    let ud = render_ok(AmiFamily::AL2023, &node(), Some(doc));
    assert_eq!(
        ud.matches("Content-Type: application/node.eks.aws").count(),
        2
    );
}

#[test]
fn al2_calls_bootstrap_sh_with_labels_and_taints_as_karpenter_does() {
    let n = NodeBootstrap {
        raid0: true,
        ..node()
    };
    let ud = render_ok(AmiFamily::AL2, &n, Some("#!/bin/bash\necho mine"));
    let expected_script = "#!/bin/bash -xe\n\
exec > >(tee /var/log/user-data.log|logger -t user-data -s 2>/dev/console) 2>&1\n\
/etc/eks/bootstrap.sh 'demo' --apiserver-endpoint 'https://ABC.gr7.us-west-2.eks.amazonaws.com' --b64-cluster-ca 'Q0E=' \\\n\
--dns-cluster-ip '10.100.0.10' \\\n\
--use-max-pods false \\\n\
--kubelet-extra-args '--node-labels=\"karpenter.sh/do-not-sync-taints=true,karpenter.sh/nodepool=default\" --register-with-taints=\"gpu=true:NoSchedule,karpenter.sh/unregistered:NoExecute\" --max-pods=29' \\\n\
--local-disks raid0";
    let expected = format!(
        "MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary=\"//\"\n\n\
--//\nContent-Type: text/x-shellscript; charset=\"us-ascii\"\n\n#!/bin/bash\necho mine\n\n\
--//\nContent-Type: text/x-shellscript; charset=\"us-ascii\"\n\n{expected_script}\n\n--//--\n"
    );
    assert_eq!(ud, expected);
}

#[test]
fn al2_passes_the_kubelet_fields_as_flags_and_ipv6_dns_turns_on_the_ipv6_family() {
    let mut n = node();
    n.kubelet = Map::from_iter([
        ("clusterDNS".to_string(), json!(["fd00::a"])),
        ("podsPerCore".to_string(), json!(4)),
        (
            "kubeReserved".to_string(),
            json!({"cpu": "100m", "memory": "1Gi"}),
        ),
        (
            "evictionHard".to_string(),
            json!({"memory.available": "5%"}),
        ),
        ("evictionMaxPodGracePeriod".to_string(), json!(30)),
        ("imageGCHighThresholdPercent".to_string(), json!(85)),
        ("cpuCFSQuota".to_string(), json!(false)),
    ]);
    let s = al2::script(&cluster(), &n);
    assert!(s.contains(" \\\n--ip-family ipv6 \\\n--dns-cluster-ip 'fd00::a'"));
    assert!(s.contains(
        "--max-pods=29 --pods-per-core=4 --kube-reserved=\"cpu=100m,memory=1Gi\" \
--eviction-hard=\"memory.available<5%\" --eviction-max-pod-grace-period=30 \
--image-gc-high-threshold=85 --cpu-cfs-quota=false'"
    ));
    assert!(!s.contains("--local-disks"));
}

#[test]
fn bottlerocket_merges_kerfs_settings_over_the_users_toml() {
    let user = r#"
[settings.kubernetes]
cluster-name = "not-this-one"
max-pods = 5
[settings.kubernetes.node-labels]
team = "a"
"karpenter.sh/nodepool" = "overwritten"
[settings.kubernetes.node-taints]
mine = ["x:NoSchedule"]
[settings.autoscaling]
should-wait = true
[settings.host-containers.admin]
enabled = true
"#;
    let mut n = node();
    n.raid0 = true;
    n.kubelet
        .insert("kubeReserved".into(), json!({"cpu": "90m"}));
    n.kubelet
        .insert("imageGCLowThresholdPercent".into(), json!(60));
    let ud = render_ok(AmiFamily::Bottlerocket, &n, Some(user));
    let doc: toml::Table = ud.parse().unwrap();
    let s = doc["settings"].as_table().unwrap();
    let k = s["kubernetes"].as_table().unwrap();
    assert_eq!(k["cluster-name"].as_str(), Some("demo"));
    assert_eq!(
        k["api-server"].as_str(),
        Some("https://ABC.gr7.us-west-2.eks.amazonaws.com")
    );
    assert_eq!(k["cluster-certificate"].as_str(), Some("Q0E="));
    assert_eq!(k["max-pods"].as_integer(), Some(29));
    assert_eq!(k["cluster-dns-ip"].as_str(), Some("10.100.0.10"));
    let labels = k["node-labels"].as_table().unwrap();
    assert_eq!(labels["team"].as_str(), Some("a"));
    assert_eq!(labels["karpenter.sh/nodepool"].as_str(), Some("default"));
    assert_eq!(
        labels["karpenter.sh/do-not-sync-taints"].as_str(),
        Some("true")
    );
    let taints = k["node-taints"].as_table().unwrap();
    assert!(
        !taints.contains_key("mine"),
        "the user's taints are replaced"
    );
    assert_eq!(
        taints["gpu"].as_array().unwrap()[0].as_str(),
        Some("true:NoSchedule")
    );
    assert_eq!(
        taints["karpenter.sh/unregistered"].as_array().unwrap()[0].as_str(),
        Some(":NoExecute")
    );
    assert_eq!(k["kube-reserved"]["cpu"].as_str(), Some("90m"));
    assert_eq!(k["image-gc-low-threshold-percent"].as_str(), Some("60"));
    assert_eq!(s["autoscaling"]["should-wait"].as_bool(), Some(false));
    assert_eq!(
        s["host-containers"]["admin"]["enabled"].as_bool(),
        Some(true)
    );
    let raid = &s["bootstrap-commands"]["000-mount-instance-storage"];
    assert_eq!(raid["mode"].as_str(), Some("always"));
    assert_eq!(raid["commands"].as_array().unwrap().len(), 2);
}

#[test]
fn bottlerocket_without_user_data_and_bad_toml() {
    let ud = render_ok(AmiFamily::Bottlerocket, &node(), None);
    let doc: toml::Table = ud.parse().unwrap();
    assert!(doc["settings"].get("autoscaling").is_none());
    assert!(doc["settings"].get("bootstrap-commands").is_none());
    let err = render(
        AmiFamily::Bottlerocket,
        &cluster(),
        &node(),
        Some("settings = ["),
    )
    .unwrap_err();
    assert!(matches!(err, UserDataError::BottlerocketToml(_)));
    assert!(
        err.to_string()
            .starts_with("spec.userData is not valid TOML")
    );
    let err = render(
        AmiFamily::Bottlerocket,
        &cluster(),
        &node(),
        Some("settings = 1"),
    )
    .unwrap_err();
    assert_eq!(err, UserDataError::BottlerocketSettings);
}

#[test]
fn windows_runs_the_users_powershell_then_start_eks_bootstrap() {
    let ud = render_ok(AmiFamily::Windows2022, &node(), Some("Write-Host hi"));
    let expected = "<powershell>\nWrite-Host hi\n\
[string]$EKSBootstrapScriptFile = \"$env:ProgramFiles\\Amazon\\EKS\\Start-EKSBootstrap.ps1\"\n\
& $EKSBootstrapScriptFile -EKSClusterName 'demo' -APIServerEndpoint 'https://ABC.gr7.us-west-2.eks.amazonaws.com' -Base64ClusterCA 'Q0E=' \
-KubeletExtraArgs '--node-labels=\"karpenter.sh/do-not-sync-taints=true,karpenter.sh/nodepool=default\" --register-with-taints=\"gpu=true:NoSchedule,karpenter.sh/unregistered:NoExecute\" --max-pods=29' \
-DNSClusterIP '10.100.0.10'\n</powershell>";
    assert_eq!(ud, expected);
}

#[test]
fn custom_passes_the_user_data_as_written() {
    assert_eq!(
        render_ok(AmiFamily::Custom, &node(), Some("#!/bin/sh\nmine")),
        "#!/bin/sh\nmine"
    );
    assert_eq!(render_ok(AmiFamily::Custom, &node(), None), "");
}

#[test]
fn taints_are_spelled_as_kubernetes_does() {
    let t = |v: Option<&str>| Taint {
        key: "k".into(),
        value: v.map(str::to_string),
        effect: "NoSchedule".into(),
    };
    assert_eq!(t(Some("v")).spelled(), "k=v:NoSchedule");
    assert_eq!(t(None).spelled(), "k:NoSchedule");
    assert_eq!(t(Some("")).spelled(), "k:NoSchedule");
    assert_eq!(quoted("a\"b\\c"), "\"a\\\"b\\\\c\"");
}
