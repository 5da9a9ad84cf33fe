//! A launch through the Cloud port writes each AMI family's user data into its launch
//! template: the node registers with its NodeClaim's labels and taints from its first second,
//! whatever the webhook does. The class's network options describe the template's primary
//! interface.

use std::collections::BTreeMap;
use std::sync::Arc;

use aws_sdk_ec2::types::ResponseLaunchTemplateData;
use base64::Engine;
use kerf_api::v1::EC2NodeClass;
use kerf_aws::cluster::Cluster;
use kerf_aws::userdata::ClusterInfo;
use kerf_aws::{CloudSettings, Ec2Cloud, launch_template};
use kerf_catalog::CapacityType;
use kerf_control::ports::cloud::NodeTaint;
use kerf_control::ports::{Cloud, CloudError, LaunchOption, LaunchRequest};
use serde_json::json;

use crate::seed::{self, SSM_ROOT, put_param, security_group, tag_subnets};
use crate::support::moto::fresh;
use crate::support::{CLUSTER, REGION, clients};

const K8S: &str = "1.31";

pub(crate) fn class(alias: &str, user_data: Option<&str>) -> Arc<EC2NodeClass> {
    let mut spec = json!({
        "amiSelectorTerms": [{"alias": alias}],
        "subnetSelectorTerms": [{"tags": {"karpenter.sh/discovery": CLUSTER}}],
        "securityGroupSelectorTerms": [{"tags": {"karpenter.sh/discovery": CLUSTER}}],
        "role": "KarpenterNodeRole",
        "instanceStorePolicy": "RAID0",
    });
    if let Some(u) = user_data {
        spec["userData"] = json!(u);
    }
    let v = json!({
        "apiVersion": "karpenter.k8s.aws/v1", "kind": "EC2NodeClass",
        "metadata": {"name": "default", "resourceVersion": "1"},
        "spec": spec,
    });
    Arc::new(serde_json::from_value(v).unwrap())
}

pub(crate) fn request(class: Arc<EC2NodeClass>) -> LaunchRequest {
    LaunchRequest {
        node_claim: "default-abcde".into(),
        node_claim_uid: "uid-default-abcde-0000-000000000000".into(),
        node_pool: "default".into(),
        node_class: class,
        capacity_type: CapacityType::OnDemand,
        options: vec![LaunchOption {
            instance_type: "m5.large".into(),
            zone: "us-west-2a".into(),
            price: 0.096,
            reservation: None,
        }],
        prioritized: false,
        labels: BTreeMap::from([
            ("karpenter.sh/nodepool".to_string(), "default".to_string()),
            ("team".to_string(), "a".to_string()),
        ]),
        taints: vec![NodeTaint {
            key: "dedicated".into(),
            value: Some("db".into()),
            effect: "NoSchedule".into(),
        }],
        efa_requested: false,
    }
}

async fn cloud(url: &str) -> (Ec2Cloud, kerf_aws::Clients) {
    cloud_with(url, "10.100.0.0/16").await
}

/// [`cloud`] for a cluster whose services are in `service_cidr`.
async fn cloud_with(url: &str, service_cidr: &str) -> (Ec2Cloud, kerf_aws::Clients) {
    cloud_of(url, service_cidr, &["m5.large"]).await
}

/// [`cloud_with`] restricted to the instance types `types`.
pub(crate) async fn cloud_of(
    url: &str,
    service_cidr: &str,
    types: &[&str],
) -> (Ec2Cloud, kerf_aws::Clients) {
    configured(url, service_cidr, types, |s| s).await
}

/// [`cloud`] with its settings changed by `change`.
pub(crate) async fn cloud_with_settings(
    url: &str,
    change: impl FnOnce(CloudSettings) -> CloudSettings,
) -> (Ec2Cloud, kerf_aws::Clients) {
    configured(url, "10.100.0.0/16", &["m5.large"], change).await
}

async fn configured(
    url: &str,
    service_cidr: &str,
    types: &[&str],
    change: impl FnOnce(CloudSettings) -> CloudSettings,
) -> (Ec2Cloud, kerf_aws::Clients) {
    let c = clients(url).await;
    tag_subnets(&c, &["us-west-2a"]).await;
    security_group(&c, "kerf-nodes").await;
    for p in [
        format!("{SSM_ROOT}/eks/optimized-ami/{K8S}/amazon-linux-2/recommended/image_id"),
        format!("{SSM_ROOT}/bottlerocket/aws-k8s-{K8S}/x86_64/latest/image_id"),
        format!(
            "{SSM_ROOT}/ami-windows-latest/Windows_Server-2022-English-Core-EKS_Optimized-{K8S}/image_id"
        ),
    ] {
        put_param(&c, &p, seed::EKS_AMI).await;
    }
    let settings = CloudSettings {
        ssm_root: SSM_ROOT.into(),
        cluster_info: Some(Cluster {
            info: ClusterInfo {
                name: CLUSTER.into(),
                endpoint: "https://example.eks.amazonaws.com".into(),
                certificate_authority: "Q0E=".into(),
                service_cidr: Some(service_cidr.into()),
            },
            version: K8S.into(),
        }),
        instance_types: types.iter().map(|t| t.to_string()).collect(),
        ..CloudSettings::new(CLUSTER, REGION)
    };
    (Ec2Cloud::new(c.clone(), change(settings)), c)
}

/// The user data of the only launch template Kerf made.
async fn launched_user_data(c: &kerf_aws::Clients) -> String {
    launched(c).await.0
}

/// The data of the only launch template Kerf made.
pub(crate) async fn template_data(c: &kerf_aws::Clients) -> ResponseLaunchTemplateData {
    let lts = launch_template::list(&c.ec2, CLUSTER).await.unwrap();
    assert_eq!(lts.len(), 1, "{lts:?}");
    let out = c
        .ec2
        .describe_launch_template_versions()
        .launch_template_name(&lts[0].name)
        .send()
        .await
        .unwrap();
    let version = &out.launch_template_versions()[0];
    version.launch_template_data().unwrap().clone()
}

/// The user data and the volumes (device, GiB) of the only launch template Kerf made.
async fn launched(c: &kerf_aws::Clients) -> (String, Vec<(String, i32)>) {
    let lt = template_data(c).await;
    let volumes = lt
        .block_device_mappings()
        .iter()
        .map(|m| {
            let size = m.ebs().and_then(|e| e.volume_size()).unwrap_or(0);
            (m.device_name().unwrap_or_default().to_string(), size)
        })
        .collect();
    let text = base64::engine::general_purpose::STANDARD
        .decode(lt.user_data().unwrap())
        .unwrap();
    (String::from_utf8(text).unwrap(), volumes)
}

#[tokio::test]
async fn bottlerocket_nodes_register_with_their_labels_and_taints_from_toml() {
    let (_g, moto) = fresh().await;
    let (cloud, c) = cloud(&moto.url).await;
    let user = "[settings.kubernetes.node-labels]\nmine = \"kept\"\n";
    cloud
        .launch(&request(class("bottlerocket@latest", Some(user))))
        .await
        .unwrap();
    let (ud, volumes) = launched(&c).await;
    assert_eq!(
        volumes,
        vec![("/dev/xvda".to_string(), 4), ("/dev/xvdb".to_string(), 20)],
        "Bottlerocket's OS and data volumes"
    );
    let doc: toml::Table = ud.parse().unwrap();
    let k = &doc["settings"]["kubernetes"];
    assert_eq!(k["cluster-name"].as_str(), Some(CLUSTER));
    assert_eq!(k["node-labels"]["team"].as_str(), Some("a"));
    assert_eq!(k["node-labels"]["mine"].as_str(), Some("kept"));
    assert_eq!(
        k["node-taints"]["dedicated"][0].as_str(),
        Some("db:NoSchedule")
    );
    assert_eq!(
        k["node-taints"]["karpenter.sh/unregistered"][0].as_str(),
        Some(":NoExecute")
    );
    assert!(k["max-pods"].as_integer().is_some_and(|n| n > 0));
    assert!(
        doc["settings"]["bootstrap-commands"]
            .get("000-mount-instance-storage")
            .is_some()
    );
}

#[tokio::test]
async fn al2_nodes_register_with_their_labels_and_taints_from_kubelet_flags() {
    let (_g, moto) = fresh().await;
    let (cloud, c) = cloud(&moto.url).await;
    cloud
        .launch(&request(class("al2@latest", None)))
        .await
        .unwrap();
    let ud = launched_user_data(&c).await;
    assert!(ud.starts_with("MIME-Version: 1.0"), "{ud}");
    assert!(ud.contains("/etc/eks/bootstrap.sh 'kerf-test'"), "{ud}");
    assert!(ud.contains(
        "--node-labels=\"karpenter.sh/do-not-sync-taints=true,karpenter.sh/nodepool=default,team=a\" \
--register-with-taints=\"dedicated=db:NoSchedule,karpenter.sh/unregistered:NoExecute\""
    ), "{ud}");
    assert!(ud.contains("--local-disks raid0"), "{ud}");
}

#[tokio::test]
async fn windows_nodes_register_with_their_labels_and_taints_from_kubelet_flags() {
    let (_g, moto) = fresh().await;
    let (cloud, c) = cloud(&moto.url).await;
    cloud
        .launch(&request(class(
            "windows2022@latest",
            Some("Write-Host mine"),
        )))
        .await
        .unwrap();
    let ud = launched_user_data(&c).await;
    assert!(ud.starts_with("<powershell>\nWrite-Host mine\n"), "{ud}");
    assert!(ud.contains("-KubeletExtraArgs '--node-labels=\"karpenter.sh/do-not-sync-taints=true,karpenter.sh/nodepool=default,team=a\""), "{ud}");
}

#[tokio::test]
async fn bottlerocket_user_data_that_is_not_toml_fails_the_launch_naming_the_field() {
    let (_g, moto) = fresh().await;
    let (cloud, c) = cloud(&moto.url).await;
    let err = cloud
        .launch(&request(class(
            "bottlerocket@latest",
            Some("#!/bin/bash\necho no"),
        )))
        .await
        .unwrap_err();
    match err {
        CloudError::NodeClassNotReady(m) => assert!(m.contains("spec.userData"), "{m}"),
        other => panic!("{other:?}"),
    }
    assert!(
        launch_template::list(&c.ec2, CLUSTER)
            .await
            .unwrap()
            .is_empty()
    );
}

/// The primary interface a launch's template describes: (groups, public IP, IPv4 prefixes,
/// IPv6 prefixes, primary IPv6, IPv6 addresses), and the top-level security groups.
type Interface = (
    Vec<String>,
    Option<bool>,
    Option<i32>,
    Option<i32>,
    Option<bool>,
    Option<i32>,
);

async fn interfaces(c: &kerf_aws::Clients) -> (Vec<Interface>, Vec<String>) {
    let lt = template_data(c).await;
    let nis = lt
        .network_interfaces()
        .iter()
        .map(|n| {
            assert_eq!(n.device_index(), Some(0));
            (
                n.groups().to_vec(),
                n.associate_public_ip_address(),
                n.ipv4_prefix_count(),
                n.ipv6_prefix_count(),
                n.primary_ipv6(),
                n.ipv6_address_count(),
            )
        })
        .collect();
    (nis, lt.security_group_ids().to_vec())
}

fn with_network(class: Arc<EC2NodeClass>) -> Arc<EC2NodeClass> {
    let mut c = (*class).clone();
    c.spec.associate_public_ip_address = Some(false);
    c.spec.ip_prefix_count = Some(2);
    Arc::new(c)
}

#[tokio::test]
async fn public_ip_and_prefixes_describe_the_primary_interface_by_the_clusters_ip_family() {
    // No network option: the groups at the top level, EC2's default interface.
    let (_g, moto) = fresh().await;
    let (ec2, c) = cloud(&moto.url).await;
    ec2.launch(&request(class("al2@latest", None)))
        .await
        .unwrap();
    let (nis, groups) = interfaces(&c).await;
    assert!(nis.is_empty(), "{nis:?}");
    assert_eq!(groups.len(), 1);
    // IPv4 cluster: IPv4 prefixes, no public IP, the groups on the interface.
    moto.reset();
    let (ec2, c) = cloud(&moto.url).await;
    let class4 = with_network(class("al2@latest", None));
    ec2.launch(&request(class4)).await.unwrap();
    let (nis, top) = interfaces(&c).await;
    assert!(top.is_empty(), "groups are on the interface: {top:?}");
    assert_eq!(nis.len(), 1);
    let (g, public, v4, v6, primary6, addrs6) = nis[0].clone();
    assert_eq!(g.len(), 1);
    assert_eq!(
        (public, v4, v6, primary6, addrs6),
        (Some(false), Some(2), None, None, None)
    );
    // IPv6 cluster: IPv6 prefixes and a primary IPv6 address.
    moto.reset();
    let (ec2, c) = cloud_with(&moto.url, "fd00:10:96::/108").await;
    ec2.launch(&request(with_network(class("al2@latest", None))))
        .await
        .unwrap();
    let (nis, _) = interfaces(&c).await;
    let (_, public, v4, v6, primary6, addrs6) = nis[0].clone();
    assert_eq!(
        (public, v4, v6, primary6, addrs6),
        (Some(false), None, Some(2), Some(true), Some(1))
    );
}
