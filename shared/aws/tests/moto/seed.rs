//! Seeds moto for a test: discovery tags on the default subnets, a node security group, AMI
//! parameters under a non-reserved SSM root, and a launch template.

use std::collections::BTreeMap;

use aws_sdk_ec2::types::Tag;
use kerf_aws::Clients;
use kerf_aws::fleet::{LaunchOption, LaunchRequest};
use kerf_aws::launch_template::{self, BlockDevice, LaunchTemplateSpec, MetadataOptions};
use kerf_aws::network::{self, SelectorTerm, Subnet};
use kerf_catalog::CapacityType;

use crate::support::CLUSTER;

/// The SSM root tests put the EKS AMI parameters under.
pub const SSM_ROOT: &str = "/kerf-test/aws/service";
/// An EKS AMI in moto's default image set.
pub const EKS_AMI: &str = "ami-ekslinux";

pub fn discovery_term() -> SelectorTerm {
    SelectorTerm::tags(&[("karpenter.sh/discovery", CLUSTER)])
}

/// Tags the default subnets of `zones` for discovery; returns all default subnets.
pub async fn tag_subnets(c: &Clients, zones: &[&str]) -> Vec<Subnet> {
    let out = c
        .ec2
        .describe_subnets()
        .send()
        .await
        .expect("describe subnets");
    let mut all = Vec::new();
    for s in out.subnets() {
        let (id, zone) = (
            s.subnet_id().unwrap_or_default(),
            s.availability_zone().unwrap_or_default(),
        );
        if zones.contains(&zone) {
            let tag = Tag::builder()
                .key("karpenter.sh/discovery")
                .value(CLUSTER)
                .build();
            c.ec2
                .create_tags()
                .resources(id)
                .tags(tag)
                .send()
                .await
                .expect("tag subnet");
        }
        all.push(Subnet {
            id: id.into(),
            zone: zone.into(),
            zone_id: String::new(),
            available_ips: s.available_ip_address_count().unwrap_or(0),
        });
    }
    all
}

/// Creates a tagged security group in the default VPC; returns its id.
pub async fn security_group(c: &Clients, name: &str) -> String {
    let out = c
        .ec2
        .create_security_group()
        .group_name(name)
        .description("kerf nodes")
        .send()
        .await
        .expect("create SG");
    let id = out.group_id().expect("group id").to_string();
    let tag = Tag::builder()
        .key("karpenter.sh/discovery")
        .value(CLUSTER)
        .build();
    c.ec2
        .create_tags()
        .resources(&id)
        .tags(tag)
        .send()
        .await
        .expect("tag SG");
    id
}

pub async fn put_param(c: &Clients, name: &str, value: &str) {
    c.ssm
        .put_parameter()
        .name(name)
        .value(value)
        .r#type(aws_sdk_ssm::types::ParameterType::String)
        .send()
        .await
        .expect("put parameter");
}

/// The launch tags a template carries (cluster ownership makes cleanup find it).
pub fn cluster_tags() -> BTreeMap<String, String> {
    BTreeMap::from([
        (
            format!("kubernetes.io/cluster/{CLUSTER}"),
            "owned".to_string(),
        ),
        ("eks:eks-cluster-name".to_string(), CLUSTER.to_string()),
    ])
}

pub fn lt_spec(user_data: &str, sgs: Vec<String>) -> LaunchTemplateSpec {
    LaunchTemplateSpec {
        image_id: EKS_AMI.into(),
        security_group_ids: sgs,
        user_data: user_data.into(),
        block_devices: vec![BlockDevice::al2023_root()],
        metadata: MetadataOptions::default(),
        instance_profile: Some("KarpenterNodeInstanceProfile".into()),
        tags: cluster_tags(),
        network: Default::default(),
        interfaces: Default::default(),
        connection_tracking: None,
        placement: None,
        reservation: Default::default(),
    }
}

/// Subnets in 2a/2b/2c, a security group and a launch template; returns (subnets, LT name).
pub async fn launch_setup(c: &Clients) -> (BTreeMap<String, Subnet>, String) {
    tag_subnets(c, &["us-west-2a", "us-west-2b", "us-west-2c"]).await;
    let sg = security_group(c, "kerf-nodes").await;
    let subnets = network::subnets(&c.ec2, &[discovery_term()])
        .await
        .expect("subnets");
    let spec = lt_spec("#!/bin/bash\necho hi", vec![sg]);
    let lt = launch_template::ensure(&c.ec2, &spec, jiff::Timestamp::now())
        .await
        .expect("LT");
    (network::zonal_subnets(&subnets), lt.name)
}

pub fn request(
    nodeclaim: &str,
    ct: CapacityType,
    options: Vec<LaunchOption>,
    subnets: &BTreeMap<String, Subnet>,
) -> LaunchRequest {
    LaunchRequest {
        cluster: CLUSTER.into(),
        nodeclaim_name: nodeclaim.into(),
        nodeclaim_uid: format!("uid-{nodeclaim}-0000-0000-000000000000"),
        nodepool: "default".into(),
        nodeclass: "default".into(),
        capacity_type: ct,
        options,
        subnets: subnets.clone(),
        tags: BTreeMap::from([("team".to_string(), "platform".to_string())]),
        prioritized: false,
        placement_group: None,
    }
}

pub fn option(itype: &str, zone: &str, price: f64, lt: &str) -> LaunchOption {
    LaunchOption {
        instance_type: itype.into(),
        zone: zone.into(),
        price,
        launch_template: lt.into(),
        reservation: None,
    }
}
