//! The disruption methods, run in Karpenter's order: expiration (forceful, beside the
//! others), then emptiness, drift and consolidation, where the first method that plans a
//! command ends the pass.

pub mod consolidation;
pub mod drift;
pub mod emptiness;
pub mod expiration;
