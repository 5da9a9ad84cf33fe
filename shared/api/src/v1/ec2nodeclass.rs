//! `karpenter.k8s.aws/v1` EC2NodeClass: how Kerf launches EC2 instances (AMIs, subnets,
//! security groups, IAM, user data, kubelet, block devices).

use std::collections::BTreeMap;

use kube_derive::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::ec2nodeclass_status::EC2NodeClassStatus;
use super::ec2nodeclass_types::{
    BlockDeviceMapping, ConnectionTracking, CpuOptions, KubeletConfiguration, MetadataOptions,
    NetworkInterface, PlacementGroupSelector, default_metadata_options,
};
use super::schema::{ec2nodeclass_rules, tag_map_rules, tags_rules};

/// The desired state of an EC2NodeClass.
// Clippy reads repeated `printcolumn(type_ = …)` arguments as duplicated attributes.
#[allow(clippy::duplicated_attributes)]
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "karpenter.k8s.aws",
    version = "v1",
    kind = "EC2NodeClass",
    plural = "ec2nodeclasses",
    singular = "ec2nodeclass",
    shortname = "ec2nc",
    shortname = "ec2ncs",
    category = "karpenter",
    derive = "PartialEq",
    status = "EC2NodeClassStatus",
    printcolumn(
        name = "Ready",
        type_ = "string",
        json_path = r#".status.conditions[?(@.type=="Ready")].status"#
    ),
    printcolumn(
        name = "Age",
        type_ = "date",
        json_path = ".metadata.creationTimestamp"
    ),
    printcolumn(
        name = "Role",
        type_ = "string",
        json_path = ".spec.role",
        priority = 1
    ),
    crates(
        kube_core = "::kube_core",
        k8s_openapi = "::k8s_openapi",
        schemars = "::schemars",
        serde = "::serde",
        serde_json = "::serde_json"
    )
)]
#[serde(rename_all = "camelCase")]
#[schemars(extend("x-kubernetes-validations" = ec2nodeclass_rules()))]
pub struct EC2NodeClassSpec {
    /// Subnets to launch into; terms are ORed, fields in a term ANDed.
    #[schemars(length(max = 30))]
    #[schemars(extend("x-kubernetes-validations" = [
        {"message": "subnetSelectorTerms cannot be empty", "rule": "self.size() != 0"},
        {"message": "expected at least one, got none, ['tags', 'id']", "rule": "self.all(x, has(x.tags) || has(x.id))"},
        {"message": "'id' is mutually exclusive, cannot be set with a combination of other fields in a subnet selector term",
         "rule": "!self.all(x, has(x.id) && has(x.tags))"}
    ]))]
    pub subnet_selector_terms: Vec<SubnetSelectorTerm>,
    /// Security groups to attach.
    #[schemars(length(max = 30))]
    #[schemars(extend("x-kubernetes-validations" = [
        {"message": "securityGroupSelectorTerms cannot be empty", "rule": "self.size() != 0"},
        {"message": "expected at least one, got none, ['tags', 'id', 'name']", "rule": "self.all(x, has(x.tags) || has(x.id) || has(x.name))"},
        {"message": "'id' is mutually exclusive, cannot be set with a combination of other fields in a security group selector term",
         "rule": "!self.all(x, has(x.id) && (has(x.tags) || has(x.name)))"},
        {"message": "'name' is mutually exclusive, cannot be set with a combination of other fields in a security group selector term",
         "rule": "!self.all(x, has(x.name) && (has(x.tags) || has(x.id)))"}
    ]))]
    pub security_group_selector_terms: Vec<SecurityGroupSelectorTerm>,
    /// On-demand capacity reservations (and capacity blocks) to launch into.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 30))]
    #[schemars(extend("x-kubernetes-validations" = [
        {"message": "expected at least one, got none, ['tags', 'id', 'instanceMatchCriteria']",
         "rule": "self.all(x, has(x.tags) || has(x.id) || has(x.instanceMatchCriteria))"},
        {"message": "'id' is mutually exclusive, cannot be set along with other fields in a capacity reservation selector term",
         "rule": "!self.all(x, has(x.id) && (has(x.tags) || has(x.ownerID) || has(x.instanceMatchCriteria)))"}
    ]))]
    pub capacity_reservation_selector_terms: Vec<CapacityReservationSelectorTerm>,
    /// Placement group to launch into.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub placement_group_selector: Option<PlacementGroupSelector>,
    /// Whether to assign a public IPv4 address (default: the subnet's setting).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        rename = "associatePublicIPAddress"
    )]
    pub associate_public_ip_address: Option<bool>,
    /// Number of IP prefixes per network interface.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0))]
    pub ip_prefix_count: Option<i32>,
    /// AMIs to launch; an `alias` term must be the only term.
    #[schemars(length(min = 1, max = 30))]
    #[schemars(extend("x-kubernetes-validations" = super::schema::ami_terms_rules()))]
    pub ami_selector_terms: Vec<AmiSelectorTerm>,
    /// User-data format and default block devices; inferred from an alias when unset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ami_family: Option<AmiFamily>,
    /// User data merged with the generated bootstrap.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_data: Option<String>,
    /// IAM role for a managed instance profile (exclusive with `instanceProfile`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("x-kubernetes-validations" = [{"message": "role cannot be empty", "rule": "self != ''"}]))]
    pub role: Option<String>,
    /// Existing instance profile (exclusive with `role`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("x-kubernetes-validations" = [{"message": "instanceProfile cannot be empty", "rule": "self != ''"}]))]
    pub instance_profile: Option<String>,
    /// Tags applied to instances, volumes, launch templates, ...
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    #[schemars(extend("x-kubernetes-validations" = tags_rules()))]
    pub tags: BTreeMap<String, String>,
    /// Kubelet settings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kubelet: Option<KubeletConfiguration>,
    /// Block devices; the AMI family's defaults when empty.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 50))]
    #[schemars(extend("x-kubernetes-validations" = [
        {"message": "must have only one blockDeviceMappings with rootVolume",
         "rule": "self.filter(x, has(x.rootVolume)?x.rootVolume==true:false).size() <= 1"}
    ]))]
    pub block_device_mappings: Vec<BlockDeviceMapping>,
    /// How instance-store volumes are used.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instance_store_policy: Option<InstanceStorePolicy>,
    /// Network interfaces (EFA); a primary interface is required when set.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 150))]
    #[schemars(extend("x-kubernetes-validations" = super::schema::network_interface_rules()))]
    pub network_interfaces: Vec<NetworkInterface>,
    /// Detailed (1-minute) CloudWatch monitoring.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detailed_monitoring: Option<bool>,
    /// Instance metadata service settings.
    #[serde(
        default = "default_metadata_options",
        skip_serializing_if = "Option::is_none"
    )]
    pub metadata_options: Option<MetadataOptions>,
    /// Connection-tracking timeouts for the network interfaces.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connection_tracking: Option<ConnectionTracking>,
    /// Reserved `CreateFleet` context.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<String>,
    /// CPU options.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_options: Option<CpuOptions>,
}

/// Selects subnets by tags or id.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SubnetSelectorTerm {
    /// Tags the subnet has; `*` matches any value.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    #[schemars(extend("maxProperties" = 20, "x-kubernetes-validations" = tag_map_rules()))]
    pub tags: BTreeMap<String, String>,
    /// Subnet id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = "subnet-[0-9a-z]+"))]
    pub id: Option<String>,
}

/// Selects security groups by tags, id or group name.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SecurityGroupSelectorTerm {
    /// Tags the group has; `*` matches any value.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    #[schemars(extend("maxProperties" = 20, "x-kubernetes-validations" = tag_map_rules()))]
    pub tags: BTreeMap<String, String>,
    /// Security group id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = "sg-[0-9a-z]+"))]
    pub id: Option<String>,
    /// Security group name (GroupName, not the Name tag).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

/// Selects capacity reservations.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CapacityReservationSelectorTerm {
    /// Tags the reservation has.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    #[schemars(extend("maxProperties" = 20, "x-kubernetes-validations" = tag_map_rules()))]
    pub tags: BTreeMap<String, String>,
    /// Reservation id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = "^cr-[0-9a-z]+$"))]
    pub id: Option<String>,
    /// Owning account id.
    #[serde(default, skip_serializing_if = "Option::is_none", rename = "ownerID")]
    #[schemars(regex(pattern = "^[0-9]{12}$"))]
    pub owner_id: Option<String>,
    /// `open` or `targeted`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("enum" = ["open", "targeted"]))]
    pub instance_match_criteria: Option<String>,
}

/// Selects AMIs by alias, tags, id, name/owner or SSM parameter.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AmiSelectorTerm {
    /// `family@version`, e.g. `al2023@latest` or `bottlerocket@v1.20.0`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 30), extend("x-kubernetes-validations" = super::schema::alias_rules()))]
    pub alias: Option<String>,
    /// Tags the image has.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    #[schemars(extend("maxProperties" = 20, "x-kubernetes-validations" = tag_map_rules()))]
    pub tags: BTreeMap<String, String>,
    /// Image id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = "ami-[0-9a-z]+"))]
    pub id: Option<String>,
    /// Image name (wildcards allowed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Image owner: account id or alias (`self`, `amazon`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner: Option<String>,
    /// SSM parameter whose value is an image id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ssm_parameter: Option<String>,
}

impl AmiSelectorTerm {
    /// An alias term, e.g. `al2023@latest`.
    pub fn alias(alias: impl Into<String>) -> Self {
        Self {
            alias: Some(alias.into()),
            ..Self::default()
        }
    }
}

/// AMI families Karpenter v1 knows.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Hash, JsonSchema)]
pub enum AmiFamily {
    /// Amazon Linux 2.
    #[serde(rename = "AL2")]
    Al2,
    /// Amazon Linux 2023.
    #[serde(rename = "AL2023")]
    Al2023,
    /// Bottlerocket.
    Bottlerocket,
    /// A custom AMI: user data is passed as is.
    Custom,
    /// Windows Server 2019.
    Windows2019,
    /// Windows Server 2022.
    Windows2022,
    /// Windows Server 2025.
    Windows2025,
}

impl AmiFamily {
    /// The alias family prefix (`al2`, `al2023`, ...); None for Custom.
    pub fn alias_prefix(self) -> Option<&'static str> {
        match self {
            Self::Al2 => Some("al2"),
            Self::Al2023 => Some("al2023"),
            Self::Bottlerocket => Some("bottlerocket"),
            Self::Custom => None,
            Self::Windows2019 => Some("windows2019"),
            Self::Windows2022 => Some("windows2022"),
            Self::Windows2025 => Some("windows2025"),
        }
    }
}

/// How instance-store volumes are used.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Hash, JsonSchema)]
pub enum InstanceStorePolicy {
    /// A RAID-0 of all local NVMe disks holds the kubelet and container runtime.
    #[serde(rename = "RAID0")]
    Raid0,
}
