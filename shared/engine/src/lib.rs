//! Kerf's decision engine. Pure: it takes a [`Snapshot`] of the cluster and the instance
//! catalog and returns a [`Plan`] as data; it never performs I/O, reads a clock or draws
//! randomness, so the same input always yields the same plan.
//!
//! Provisioning follows Karpenter's scheduler (existing nodes, then in-flight NodeClaims,
//! then new NodeClaims from NodePools by weight; requirements, taints, topology, affinity,
//! preferences relaxed in Karpenter's order) and then minimises the hourly cost of what it
//! launches by comparing packing policies and resizing every new claim to its cheapest fit.

pub mod confpack;
pub mod cost;
pub mod cron;
pub mod disruption;
pub mod labels;
pub mod model;
pub mod overlay;
pub mod plan;
pub mod podreqs;
pub mod requirements;
pub mod selector;
pub mod statics;
pub mod taints;
pub mod time;

mod all;
mod conflict;
mod domains;
mod existing;
mod finalize;
mod fit;
#[cfg(test)]
mod fixtures;
mod index;
mod leaving;
mod min_values;
mod offered;
mod offering_filter;
mod open;
mod pod_rules;
mod pools;
mod prepare;
mod price;
mod provisioning;
mod refusal;
mod repack;
mod res;
mod reserve;
mod scheduler;
mod slots;
mod summary;
mod topology;
mod type_labels;
mod view;
mod volumes;

pub use all::plan_all;
pub use disruption::{
    DisruptOptions, Recorded, Rejection, allowed_disruptions, consolidatable, disrupt, due_moments,
    evacuate, validate,
};
pub use model::{Options, Snapshot};
pub use plan::Plan;
pub use provisioning::provision;
