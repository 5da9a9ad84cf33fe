//! What an EC2NodeClass resolves to before a launch: its subnets (one per zone), security
//! groups, AMIs by architecture, instance profile, and the launch-template parameters
//! (block devices, metadata options, kubelet settings, user data, network interfaces) —
//! resolved from the class's selector terms, cached for a minute per class version, as
//! Karpenter's subnet/security-group/AMI caches do.

use std::collections::BTreeMap;

use kerf_api::v1::EC2NodeClass;
use kerf_catalog::network::NetworkInterface;
use kerf_catalog::{AmiFamily, InstanceStorePolicy};
use serde_json::{Map, Value};

use crate::ami::{self, Alias, ImageTerm, ResolvedAmi};
use crate::error::AwsError;
use crate::launch_template::{BlockDevice, ConnectionTracking, MetadataOptions, PrimaryInterface};
use crate::network::{self, SelectorTerm, Subnet};

/// A node class, resolved.
#[derive(Clone, Debug, PartialEq)]
pub struct Resolved {
    /// One subnet per zone (the most free addresses).
    pub subnets: BTreeMap<String, Subnet>,
    pub security_groups: Vec<String>,
    /// The newest AMI per architecture (`x86_64`, `arm64`).
    pub amis: Vec<ResolvedAmi>,
    pub instance_profile: Option<String>,
    pub block_devices: Vec<BlockDevice>,
    pub metadata: MetadataOptions,
    /// KubeletConfiguration fields from `spec.kubelet` (without `maxPods`, set per type).
    pub kubelet: Map<String, Value>,
    pub user_data: Option<String>,
    /// The AMI family the class resolves to (its alias's, else `amiFamily`): the user-data
    /// format.
    pub family: AmiFamily,
    /// `instanceStorePolicy: RAID0`.
    pub raid0: bool,
    /// `associatePublicIPAddress` and `ipPrefixCount` (the IP family is the cluster's).
    pub network: PrimaryInterface,
    /// `networkInterfaces` (empty when not set).
    pub interfaces: Vec<NetworkInterface>,
    /// `connectionTracking`.
    pub connection_tracking: Option<ConnectionTracking>,
}

fn terms<T>(v: &[T], f: impl Fn(&T) -> SelectorTerm) -> Vec<SelectorTerm> {
    v.iter().map(f).collect()
}

/// The selector terms of a class's subnets and security groups.
pub fn network_terms(c: &EC2NodeClass) -> (Vec<SelectorTerm>, Vec<SelectorTerm>) {
    let s = &c.spec;
    let subnets = terms(&s.subnet_selector_terms, |t| SelectorTerm {
        id: t.id.clone(),
        name: None,
        tags: t.tags.clone(),
    });
    let groups = terms(&s.security_group_selector_terms, |t| SelectorTerm {
        id: t.id.clone(),
        name: t.name.clone(),
        tags: t.tags.clone(),
    });
    (subnets, groups)
}

/// Block devices: the class's, or its family's defaults.
pub fn block_devices(c: &EC2NodeClass, family: AmiFamily) -> Vec<BlockDevice> {
    let mapped: Vec<BlockDevice> = c
        .spec
        .block_device_mappings
        .iter()
        .filter_map(|m| {
            let ebs = m.ebs.as_ref()?;
            let gib = ebs
                .volume_size
                .as_deref()
                .and_then(|q| kerf_catalog::quantity::parse(q).ok())
                .map(|milli| ((milli / 1000 + (1 << 30) - 1) >> 30) as i32)
                .unwrap_or(20);
            Some(BlockDevice {
                device_name: m.device_name.clone().unwrap_or_else(|| "/dev/xvda".into()),
                volume_size_gib: gib,
                volume_type: ebs.volume_type.clone().unwrap_or_else(|| "gp3".into()),
                encrypted: ebs.encrypted.unwrap_or(true),
                iops: ebs.iops.map(|v| v as i32),
                throughput: ebs.throughput.map(|v| v as i32),
                kms_key_id: ebs.kms_key_id.clone(),
                delete_on_termination: ebs.delete_on_termination.unwrap_or(true),
            })
        })
        .collect();
    if mapped.is_empty() {
        BlockDevice::defaults(family)
    } else {
        mapped
    }
}

/// Metadata options: the class's over Karpenter's defaults.
pub fn metadata(c: &EC2NodeClass) -> MetadataOptions {
    let mut m = MetadataOptions::default();
    if let Some(o) = &c.spec.metadata_options {
        if let Some(v) = &o.http_endpoint {
            m.http_endpoint = v.clone();
        }
        if let Some(v) = o.http_put_response_hop_limit {
            m.http_put_response_hop_limit = v as i32;
        }
        if let Some(v) = &o.http_tokens {
            m.http_tokens = v.clone();
        }
    }
    m
}

/// `spec.kubelet` as KubeletConfiguration fields (same names), `maxPods` left out.
pub fn kubelet(c: &EC2NodeClass) -> Map<String, Value> {
    let mut m = match serde_json::to_value(&c.spec.kubelet) {
        Ok(Value::Object(m)) => m,
        _ => Map::new(),
    };
    m.remove("maxPods");
    m
}

/// Resolves everything a launch with `c` needs from EC2 and SSM.
pub async fn resolve(
    ec2: &aws_sdk_ec2::Client,
    ssm: &aws_sdk_ssm::Client,
    c: &EC2NodeClass,
    k8s_version: &str,
    ssm_root: &str,
) -> Result<Resolved, AwsError> {
    let (subnet_terms, group_terms) = network_terms(c);
    let subnets = network::subnets(ec2, &subnet_terms).await?;
    if subnets.is_empty() {
        return Err(AwsError::invalid(
            "DescribeSubnets",
            "no subnet matches spec.subnetSelectorTerms",
        ));
    }
    let groups = network::security_groups(ec2, &group_terms).await?;
    if groups.is_empty() {
        return Err(AwsError::invalid(
            "DescribeSecurityGroups",
            "no security group matches spec.securityGroupSelectorTerms",
        ));
    }
    let settings = kerf_convert::cluster::settings(c).map_err(|e| {
        AwsError::invalid("ResolveNodeClass", format!("{}: {}", e.field, e.message))
    })?;
    let amis = amis(ec2, ssm, c, k8s_version, ssm_root).await?;
    Ok(Resolved {
        subnets: network::zonal_subnets(&subnets),
        security_groups: groups.into_iter().map(|g| g.id).collect(),
        amis,
        instance_profile: c
            .spec
            .instance_profile
            .clone()
            .or_else(|| c.spec.role.clone()),
        block_devices: block_devices(c, settings.ami_family),
        metadata: metadata(c),
        kubelet: kubelet(c),
        user_data: c.spec.user_data.clone(),
        family: settings.ami_family,
        raid0: settings.instance_store_policy == Some(InstanceStorePolicy::RAID0),
        network: PrimaryInterface {
            associate_public_ip: c.spec.associate_public_ip_address,
            prefix_count: c.spec.ip_prefix_count,
            ipv6: false,
        },
        interfaces: settings.network_interfaces,
        connection_tracking: c
            .spec
            .connection_tracking
            .as_ref()
            .map(|t| ConnectionTracking {
                tcp_established_timeout: t.tcp_established_timeout,
                udp_stream_timeout: t.udp_stream_timeout,
                udp_timeout: t.udp_timeout,
            }),
    })
}

async fn amis(
    ec2: &aws_sdk_ec2::Client,
    ssm: &aws_sdk_ssm::Client,
    c: &EC2NodeClass,
    k8s_version: &str,
    ssm_root: &str,
) -> Result<Vec<ResolvedAmi>, AwsError> {
    if let Some(alias) = c
        .spec
        .ami_selector_terms
        .iter()
        .find_map(|t| t.alias.clone())
    {
        return ami::resolve_alias(ssm, ec2, &Alias::parse(&alias)?, k8s_version, ssm_root).await;
    }
    let parameters: Vec<String> = c
        .spec
        .ami_selector_terms
        .iter()
        .filter_map(|t| t.ssm_parameter.clone())
        .collect();
    let from_parameters = ami::ids_from_parameters(ssm, &parameters).await?;
    let by_parameter = from_parameters.into_iter().map(|id| ImageTerm {
        id: Some(id),
        ..ImageTerm::default()
    });
    let terms: Vec<ImageTerm> = c
        .spec
        .ami_selector_terms
        .iter()
        .filter(|t| t.ssm_parameter.is_none())
        .map(|t| ImageTerm {
            id: t.id.clone(),
            name: t.name.clone(),
            owner: t.owner.clone(),
            tags: t.tags.clone(),
        })
        .chain(by_parameter)
        .collect();
    let found = ami::resolve_terms(ec2, &terms).await?;
    if found.is_empty() {
        return Err(AwsError::invalid(
            "DescribeImages",
            "no AMI matches spec.amiSelectorTerms",
        ));
    }
    Ok(found)
}
