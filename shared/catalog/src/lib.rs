//! Kerf's instance-type catalog: what each EC2 instance type offers a Kubernetes node
//! (labels, capacity, overhead, allocatable) and where it can be bought (offerings with prices).
//!
//! Pure: no I/O, no clock. The bundled catalog is compiled in; `--catalog` files and live
//! discovery produce the same [`Catalog`] value.

pub mod build;
pub mod bundled;
pub mod capacity;
pub mod file;
pub mod labels;
pub mod network;
pub mod overhead;
pub mod placement;
pub mod pricing;
pub mod quantity;
mod regions;
pub mod reservation;
pub mod resources;
pub mod settings;
pub mod spec;
pub mod table;
pub mod unavailable;
pub mod volumes;

pub use build::instance_type;
pub use bundled::{bundled, bundled_regions};
pub use pricing::{PriceSource, StaticPrices};
pub use resources::Resources;
pub use settings::{AmiFamily, BlockDeviceMapping, InstanceStorePolicy, NodeClassSettings};
pub use spec::{Ec2Spec, SpecSource};

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// Errors from building or reading a catalog.
#[derive(Debug, thiserror::Error)]
pub enum CatalogError {
    #[error("invalid quantity {0:?}")]
    Quantity(String),
    #[error("catalog file: {0}")]
    File(String),
    #[error("unknown region {region:?}; bundled regions: {known}")]
    UnknownRegion { region: String, known: String },
    #[error("instance type {name}: {message}")]
    InstanceType { name: String, message: String },
}

/// `spot`, `on-demand` or `reserved` (a capacity reservation's offering).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CapacityType {
    Spot,
    OnDemand,
    Reserved,
}

impl CapacityType {
    pub fn as_str(self) -> &'static str {
        match self {
            CapacityType::Spot => "spot",
            CapacityType::OnDemand => "on-demand",
            CapacityType::Reserved => "reserved",
        }
    }

    pub fn parse(s: &str) -> Option<CapacityType> {
        match s {
            "spot" => Some(CapacityType::Spot),
            "on-demand" => Some(CapacityType::OnDemand),
            "reserved" => Some(CapacityType::Reserved),
            _ => None,
        }
    }
}

impl std::fmt::Display for CapacityType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl PartialEq<str> for CapacityType {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for CapacityType {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

/// One place an instance type can be bought: a zone and a capacity type (and, in a partition
/// placement group, a partition), at a price.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Offering {
    pub zone: String,
    pub capacity_type: CapacityType,
    /// USD per instance-hour.
    pub price: f64,
    /// False when the offering is known not to launch (no price, ICE-cached, zone not in subnets).
    pub available: bool,
    /// The partition of the node class's partition placement group this offering launches
    /// into (`karpenter.k8s.aws/placement-group-partition`); `None` outside one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partition: Option<u32>,
    /// The capacity reservation a `reserved` offering launches into; `None` for every other
    /// capacity type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reservation: Option<reservation::ReservedOffering>,
}

/// What the kubelet and the OS keep for themselves on a node.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Overhead {
    pub kube_reserved: Resources,
    pub system_reserved: Resources,
    pub eviction_threshold: Resources,
}

impl Overhead {
    pub fn total(&self) -> Resources {
        let mut t = self.kube_reserved.clone();
        t.add(&self.system_reserved);
        t.add(&self.eviction_threshold);
        t
    }
}

/// An instance type as the scheduler sees it.
#[derive(Clone, Debug, PartialEq)]
pub struct InstanceType {
    pub name: String,
    /// Single-valued labels (requirements `key In [value]`) the type carries, including
    /// `node.kubernetes.io/instance-type`, arch, os and the `karpenter.k8s.aws/*` labels.
    pub labels: BTreeMap<String, String>,
    /// Raw node capacity (what NodePool `limits` count).
    pub capacity: Resources,
    pub overhead: Overhead,
    /// What pods may use: capacity minus overhead.
    pub allocatable: Resources,
    pub offerings: Vec<Offering>,
    /// How many EBS volumes a node of this type can attach for pods (the EBS CSI driver's
    /// rule, see [`volumes`]); `None` when the catalog does not know.
    pub ebs_volume_limit: Option<u32>,
}

impl InstanceType {
    /// The cheapest available offering, if any.
    pub fn cheapest_available(&self) -> Option<&Offering> {
        self.offerings
            .iter()
            .filter(|o| o.available)
            .min_by(|a, b| a.price.total_cmp(&b.price))
    }
}

/// All instance types of one region.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Catalog {
    pub region: String,
    pub instance_types: Vec<InstanceType>,
}
