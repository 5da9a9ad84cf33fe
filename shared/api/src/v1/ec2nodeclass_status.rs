//! The observed state of an EC2NodeClass: resolved subnets, security groups, AMIs, capacity
//! reservations, instance profile and conditions.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::common::Condition;

/// The observed state of an EC2NodeClass.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct EC2NodeClassStatus {
    /// Subnets resolved from the selector terms.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub subnets: Vec<Subnet>,
    /// Security groups resolved from the selector terms.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub security_groups: Vec<SecurityGroup>,
    /// Capacity reservations resolved from the selector terms.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub capacity_reservations: Vec<CapacityReservation>,
    /// AMIs resolved from the selector terms, newest first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub amis: Vec<Ami>,
    /// Name of the instance profile in use.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instance_profile: Option<String>,
    /// Ready, AMIsReady, SubnetsReady, SecurityGroupsReady, InstanceProfileReady, ...
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(extend("x-kubernetes-list-type" = "map", "x-kubernetes-list-map-keys" = ["type"]))]
    pub conditions: Vec<Condition>,
}

/// A resolved subnet.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Subnet {
    /// Subnet id.
    pub id: String,
    /// Availability zone name.
    pub zone: String,
    /// Availability zone id.
    #[serde(default, skip_serializing_if = "Option::is_none", rename = "zoneID")]
    pub zone_id: Option<String>,
}

/// A resolved security group.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SecurityGroup {
    /// Security group id.
    pub id: String,
    /// Group name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

/// A resolved AMI and the requirements of the instance types it serves.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Ami {
    /// Image id.
    pub id: String,
    /// Whether the image is deprecated.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub deprecated: bool,
    /// Image name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Requirements an instance type must meet to use this image.
    pub requirements: Vec<NodeSelectorRequirement>,
}

/// A plain node selector requirement (no minValues).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct NodeSelectorRequirement {
    /// Label key.
    pub key: String,
    /// In, NotIn, Exists, DoesNotExist, Gt, Lt.
    pub operator: String,
    /// Values.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(extend("x-kubernetes-list-type" = "atomic"))]
    pub values: Vec<String>,
}

/// A resolved capacity reservation.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CapacityReservation {
    /// Availability zone.
    pub availability_zone: String,
    /// When a capacity block ends (RFC 3339).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("format" = "date-time"))]
    pub end_time: Option<String>,
    /// Reservation id.
    #[schemars(regex(pattern = "^cr-[0-9a-z]+$"))]
    pub id: String,
    /// `open` or `targeted`.
    #[schemars(extend("enum" = ["open", "targeted"]))]
    pub instance_match_criteria: String,
    /// Instance type reserved.
    pub instance_type: String,
    /// Owning account.
    #[serde(rename = "ownerID")]
    #[schemars(regex(pattern = "^[0-9]{12}$"))]
    pub owner_id: String,
    /// `default` or `capacity-block`.
    #[serde(default = "default_reservation_type")]
    #[schemars(extend("enum" = ["default", "capacity-block"]))]
    pub reservation_type: String,
    /// Whether the reservation can be interrupted.
    #[serde(default)]
    pub interruptible: bool,
    /// `active` or `expiring`.
    #[serde(default = "default_reservation_state")]
    #[schemars(extend("enum" = ["active", "expiring"]))]
    pub state: String,
}

fn default_reservation_type() -> String {
    "default".to_string()
}

fn default_reservation_state() -> String {
    "active".to_string()
}
