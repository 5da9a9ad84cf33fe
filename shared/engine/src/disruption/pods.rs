//! What a node's pods say about disrupting it ([`crate::pod_rules`], shared with
//! provisioning and static pools).

pub use crate::pod_rules::*;
