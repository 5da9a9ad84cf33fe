//! Support for Kerf's end-to-end tests: the simulated world with the getting-started
//! objects and readers of what it holds, a local Lambda Runtime API to run the function
//! binaries against, a moto server, and a real control plane (`scripts/cluster.sh`) with
//! Kerf's functions and a kubelet bridge on it.
//!
//! Test support: a failure to set up panics the test that asked for it.
#![allow(clippy::unwrap_used, clippy::expect_used)]

pub mod account;
pub mod events;
pub mod lambda;
pub mod moto;
pub mod real;
pub mod world;
