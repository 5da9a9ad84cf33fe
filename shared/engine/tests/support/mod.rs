//! Shared test support: workload mixes over the bundled catalog, and a linear-programming
//! lower bound on what any plan for them must cost.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

pub mod lp;
pub mod mixes;
