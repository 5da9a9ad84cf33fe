//! Kerf's AWS adapters: the control layer's Cloud, Queue and Publisher ports on
//! aws-sdk-rust ([`cloud::Ec2Cloud`], [`queue::SqsQueue`], [`ports::EventBridgePublisher`]).
//!
//! EC2 discovery (instance types, offerings → [`kerf_catalog::Catalog`]), pricing, subnets,
//! security groups, placement groups, capacity reservations, AMIs via SSM, launch templates
//! with AL2023 user data, CreateFleet with an idempotent ClientToken, the unavailable-offerings cache stored in the cluster, instances
//! (terminate, describe, GC listing, status), SQS and EventBridge. Every call returns a typed
//! [`AwsError`] that says whether to retry.

pub mod ami;
pub mod capacity_reservation;
pub mod cloud;
pub mod cluster;
pub mod config;
pub mod discovery;
pub mod error;
pub mod events;
pub mod fleet;
pub mod health;
pub mod ice;
pub mod instances;
pub mod launch;
pub mod launch_template;
pub mod network;
pub mod nodeclass;
pub mod placement_group;
pub mod ports;
pub mod price_book;
pub mod pricing;
pub mod queue;
pub mod spec_map;
pub mod userdata;

pub use cloud::{CloudSettings, Ec2Cloud};
pub use config::{AwsSettings, Clients};
pub use error::AwsError;
pub use fleet::{LaunchOption, LaunchRequest, Launched};
pub use ice::{
    InMemoryOfferingCacheStore, OfferingCacheStore, OfferingKey, UnavailableOfferings,
    UnavailableOfferingsStore,
};
pub use ports::EventBridgePublisher;
