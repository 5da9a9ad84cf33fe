//! Launch templates: one per distinct resolved parameter set (AMI, security groups, user data,
//! block devices, metadata options, instance profile, tags, network interfaces, placement,
//! capacity reservation), named by a stable hash of that set, reused when present, and
//! deleted once no launch has used them for a while.
//!
//! A serverless launcher has no cache whose eviction could say a template went out of use, so
//! the use is written on the template: every launch that finds its template's
//! [`LAST_USED_TAG`] older than [`TOUCH_AFTER`] moves it to now, and the sweep deletes the
//! cluster's templates whose last use (or creation) is older than the port's
//! `TEMPLATE_UNUSED_FOR`. The touch is far more frequent than the deletion, so a template in
//! use is never deleted; one deleted just before a launch is re-created by that launch (EC2's
//! not-found answer is retried once).

use std::collections::BTreeMap;

use aws_sdk_ec2::types::{
    LaunchTemplateBlockDeviceMappingRequest, LaunchTemplateEbsBlockDeviceRequest,
    LaunchTemplateHttpTokensState, LaunchTemplateIamInstanceProfileSpecificationRequest,
    LaunchTemplateInstanceMetadataEndpointState, LaunchTemplateInstanceMetadataOptionsRequest,
    LaunchTemplateInstanceMetadataProtocolIpv6, RequestLaunchTemplateData, ResourceType, Tag,
    TagSpecification, VolumeType,
};
use base64::Engine;
use jiff::{SignedDuration, Timestamp};
use kerf_catalog::AmiFamily;
use serde::Serialize;

use crate::error::{AwsError, from_sdk};

mod cleanup;
mod interface;
mod placement;
mod reservation;

pub use cleanup::{delete_unused, list};
pub use interface::{ConnectionTracking, Interfaces, PrimaryInterface};
pub use placement::Placement;
pub use reservation::ReservationTarget;

/// Every launch template Kerf creates is named `<prefix><hash>`.
pub const NAME_PREFIX: &str = "kerf.k8s.aws/";

pub use kerf_labels::aws::LAST_USED_TAG;

/// A launch moves its template's last use to now once the tag is this old.
pub const TOUCH_AFTER: SignedDuration = SignedDuration::from_mins(10);

// A template in use always has a last use far younger than the age at which one is deleted.
const _: () = assert!(
    TOUCH_AFTER.as_secs() * 6 <= kerf_control::ports::TEMPLATE_UNUSED_FOR.as_secs(),
    "launch templates are touched far more often than they are deleted"
);

/// One EBS block device mapping.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct BlockDevice {
    pub device_name: String,
    pub volume_size_gib: i32,
    pub volume_type: String,
    pub encrypted: bool,
    pub iops: Option<i32>,
    pub throughput: Option<i32>,
    pub kms_key_id: Option<String>,
    pub delete_on_termination: bool,
}

impl BlockDevice {
    /// AL2023's default root volume: `/dev/xvda` 20 GiB gp3, encrypted.
    pub fn al2023_root() -> Self {
        BlockDevice {
            device_name: "/dev/xvda".into(),
            volume_size_gib: 20,
            volume_type: "gp3".into(),
            encrypted: true,
            iops: None,
            throughput: None,
            kms_key_id: None,
            delete_on_termination: true,
        }
    }

    /// An encrypted gp3 volume of `gib` at `device`.
    fn gp3(device: &str, gib: i32) -> Self {
        BlockDevice {
            device_name: device.into(),
            volume_size_gib: gib,
            ..BlockDevice::al2023_root()
        }
    }

    /// A family's volumes when the class lists none, as Karpenter's provider maps them:
    /// AL2 and AL2023 a 20 GiB root, Bottlerocket a 4 GiB OS volume and a 20 GiB data volume,
    /// Windows a 50 GiB root, and a custom AMI its own mappings (none here).
    pub fn defaults(family: AmiFamily) -> Vec<BlockDevice> {
        match family {
            AmiFamily::AL2 | AmiFamily::AL2023 => vec![BlockDevice::al2023_root()],
            AmiFamily::Bottlerocket => vec![
                BlockDevice::gp3("/dev/xvda", 4),
                BlockDevice::gp3("/dev/xvdb", 20),
            ],
            AmiFamily::Windows2019 | AmiFamily::Windows2022 | AmiFamily::Windows2025 => {
                vec![BlockDevice::gp3("/dev/sda1", 50)]
            }
            AmiFamily::Custom => Vec::new(),
        }
    }
}

/// `spec.metadataOptions` (Karpenter's defaults: IMDSv2 required, hop limit 1).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct MetadataOptions {
    pub http_endpoint: String,
    pub http_protocol_ipv6: String,
    pub http_put_response_hop_limit: i32,
    pub http_tokens: String,
}

impl Default for MetadataOptions {
    fn default() -> Self {
        MetadataOptions {
            http_endpoint: "enabled".into(),
            http_protocol_ipv6: "disabled".into(),
            http_put_response_hop_limit: 1,
            http_tokens: "required".into(),
        }
    }
}

/// The resolved parameters of one launch template.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct LaunchTemplateSpec {
    pub image_id: String,
    pub security_group_ids: Vec<String>,
    /// Plain text; base64-encoded when sent.
    pub user_data: String,
    pub block_devices: Vec<BlockDevice>,
    pub metadata: MetadataOptions,
    pub instance_profile: Option<String>,
    /// Tags on the template (and the cluster ownership tag used for cleanup).
    pub tags: BTreeMap<String, String>,
    /// Left out of the name's hash when default, so templates made before it keep their names.
    #[serde(skip_serializing_if = "PrimaryInterface::is_default")]
    pub network: PrimaryInterface,
    /// The class's `networkInterfaces` or the requested EFA interfaces; left out of the hash
    /// when neither.
    #[serde(skip_serializing_if = "Interfaces::is_primary")]
    pub interfaces: Interfaces,
    /// `spec.connectionTracking`; left out of the hash when unset.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub connection_tracking: Option<ConnectionTracking>,
    /// The placement group (and partition); left out of the hash when none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub placement: Option<Placement>,
    /// The capacity reservations its instances may use; left out of the hash when unset.
    #[serde(skip_serializing_if = "ReservationTarget::is_unset")]
    pub reservation: ReservationTarget,
}

impl LaunchTemplateSpec {
    /// The stable name: the prefix and a hash of the canonical parameters (SGs as a set).
    pub fn name(&self) -> String {
        let mut canonical = self.clone();
        canonical.security_group_ids.sort();
        canonical.security_group_ids.dedup();
        let json = serde_json::to_string(&canonical).unwrap_or_default();
        format!(
            "{NAME_PREFIX}{:016x}",
            kerf_catalog::pricing::fnv1a64(json.as_bytes())
        )
    }
}

/// A launch template as EC2 knows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LaunchTemplateRef {
    pub id: String,
    pub name: String,
    pub created_at: Option<Timestamp>,
    /// The [`LAST_USED_TAG`]'s time, when the template has a readable one.
    pub last_used: Option<Timestamp>,
}

impl LaunchTemplateRef {
    /// When a launch last used the template, as far as EC2 says: its last-use tag, or its
    /// creation.
    pub fn used_at(&self) -> Option<Timestamp> {
        match (self.last_used, self.created_at) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        }
    }
}

fn tags_of(tags: &BTreeMap<String, String>) -> Vec<Tag> {
    tags.iter()
        .map(|(k, v)| Tag::builder().key(k).value(v).build())
        .collect()
}

fn block_device(b: &BlockDevice) -> LaunchTemplateBlockDeviceMappingRequest {
    let ebs = LaunchTemplateEbsBlockDeviceRequest::builder()
        .volume_size(b.volume_size_gib)
        .volume_type(VolumeType::from(b.volume_type.as_str()))
        .encrypted(b.encrypted)
        .set_iops(b.iops)
        .set_throughput(b.throughput)
        .set_kms_key_id(b.kms_key_id.clone())
        .delete_on_termination(b.delete_on_termination)
        .build();
    LaunchTemplateBlockDeviceMappingRequest::builder()
        .device_name(&b.device_name)
        .ebs(ebs)
        .build()
}

fn metadata(m: &MetadataOptions) -> LaunchTemplateInstanceMetadataOptionsRequest {
    LaunchTemplateInstanceMetadataOptionsRequest::builder()
        .http_endpoint(LaunchTemplateInstanceMetadataEndpointState::from(
            m.http_endpoint.as_str(),
        ))
        .http_protocol_ipv6(LaunchTemplateInstanceMetadataProtocolIpv6::from(
            m.http_protocol_ipv6.as_str(),
        ))
        .http_put_response_hop_limit(m.http_put_response_hop_limit)
        .http_tokens(LaunchTemplateHttpTokensState::from(m.http_tokens.as_str()))
        .build()
}

fn template_data(spec: &LaunchTemplateSpec) -> RequestLaunchTemplateData {
    let user_data = base64::engine::general_purpose::STANDARD.encode(spec.user_data.as_bytes());
    let profile = spec.instance_profile.as_ref().map(|p| {
        LaunchTemplateIamInstanceProfileSpecificationRequest::builder()
            .name(p)
            .build()
    });
    let interfaces = interface::requests(
        &spec.network,
        &spec.interfaces,
        spec.connection_tracking.as_ref(),
        &spec.security_group_ids,
    );
    let groups = interfaces
        .is_none()
        .then(|| spec.security_group_ids.clone());
    RequestLaunchTemplateData::builder()
        .image_id(&spec.image_id)
        .user_data(user_data)
        .set_security_group_ids(groups)
        .set_network_interfaces(interfaces)
        .set_block_device_mappings(Some(spec.block_devices.iter().map(block_device).collect()))
        .metadata_options(metadata(&spec.metadata))
        .set_iam_instance_profile(profile)
        .set_placement(spec.placement.as_ref().map(Placement::request))
        .set_capacity_reservation_specification(spec.reservation.specification())
        .set_instance_market_options(spec.reservation.market())
        .build()
}

/// Looks a template up by name (`None` when it does not exist).
pub async fn find(
    ec2: &aws_sdk_ec2::Client,
    name: &str,
) -> Result<Option<LaunchTemplateRef>, AwsError> {
    match ec2
        .describe_launch_templates()
        .launch_template_names(name)
        .send()
        .await
    {
        Ok(out) => Ok(out.launch_templates().iter().find_map(to_ref)),
        Err(e) => match from_sdk("DescribeLaunchTemplates", e) {
            AwsError::NotFound(_) => Ok(None),
            other => Err(other),
        },
    }
}

fn to_ref(lt: &aws_sdk_ec2::types::LaunchTemplate) -> Option<LaunchTemplateRef> {
    Some(LaunchTemplateRef {
        id: lt.launch_template_id()?.to_string(),
        name: lt.launch_template_name()?.to_string(),
        created_at: lt
            .create_time()
            .and_then(|t| Timestamp::from_second(t.secs()).ok()),
        last_used: lt
            .tags()
            .iter()
            .find(|t| t.key() == Some(LAST_USED_TAG))
            .and_then(|t| t.value()?.parse().ok()),
    })
}

/// The [`LAST_USED_TAG`] saying a launch used the template at `now`.
fn last_used_tag(now: Timestamp) -> Tag {
    Tag::builder()
        .key(LAST_USED_TAG)
        .value(now.to_string())
        .build()
}

/// Moves the template's last use to `now` when it is [`TOUCH_AFTER`] old. A failed touch only
/// logs: the launch goes on, and the template is at worst re-created after a deletion.
async fn touch(ec2: &aws_sdk_ec2::Client, lt: &LaunchTemplateRef, now: Timestamp) {
    if lt
        .used_at()
        .is_some_and(|t| now.duration_since(t) < TOUCH_AFTER)
    {
        return;
    }
    let sent = ec2
        .create_tags()
        .resources(&lt.id)
        .tags(last_used_tag(now))
        .send()
        .await;
    if let Err(e) = sent {
        let e = from_sdk("CreateTags", e);
        tracing::warn!(template = %lt.name, error = %e, "could not record the launch template's use");
    }
}

/// Returns the template for `spec`, creating it when missing (idempotent under races), and
/// records its use at `now`.
pub async fn ensure(
    ec2: &aws_sdk_ec2::Client,
    spec: &LaunchTemplateSpec,
    now: Timestamp,
) -> Result<LaunchTemplateRef, AwsError> {
    let name = spec.name();
    if let Some(found) = find(ec2, &name).await? {
        touch(ec2, &found, now).await;
        return Ok(found);
    }
    let mut tags = tags_of(&spec.tags);
    tags.push(last_used_tag(now));
    let tags = TagSpecification::builder()
        .resource_type(ResourceType::LaunchTemplate)
        .set_tags(Some(tags))
        .build();
    let created = ec2
        .create_launch_template()
        .launch_template_name(&name)
        .launch_template_data(template_data(spec))
        .tag_specifications(tags)
        .send()
        .await;
    match created {
        Ok(out) => out
            .launch_template()
            .and_then(to_ref)
            .ok_or_else(|| AwsError::bad_response("CreateLaunchTemplate", "no template returned")),
        Err(e) => {
            let err = from_sdk("CreateLaunchTemplate", e);
            if is_already_exists(&err)
                && let Some(found) = find(ec2, &name).await?
            {
                touch(ec2, &found, now).await;
                return Ok(found);
            }
            Err(err)
        }
    }
}

fn is_already_exists(e: &AwsError) -> bool {
    matches!(e, AwsError::InvalidRequest(i) if i.code.contains("AlreadyExists"))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub(super) fn spec() -> LaunchTemplateSpec {
        LaunchTemplateSpec {
            image_id: "ami-1".into(),
            security_group_ids: vec!["sg-b".into(), "sg-a".into()],
            user_data: "ud".into(),
            block_devices: vec![BlockDevice::al2023_root()],
            metadata: MetadataOptions::default(),
            instance_profile: Some("profile".into()),
            tags: BTreeMap::from([("kubernetes.io/cluster/demo".into(), "owned".into())]),
            network: PrimaryInterface::default(),
            interfaces: Interfaces::Primary,
            connection_tracking: None,
            placement: None,
            reservation: ReservationTarget::Unset,
        }
    }

    #[test]
    fn name_is_stable_and_sg_order_free() {
        let a = spec();
        let mut b = spec();
        b.security_group_ids.reverse();
        assert_eq!(a.name(), b.name());
        assert!(a.name().starts_with(NAME_PREFIX));
        assert_eq!(a.name().len(), NAME_PREFIX.len() + 16);
        let mut c = spec();
        c.user_data.push('x');
        assert_ne!(a.name(), c.name());
    }
}
