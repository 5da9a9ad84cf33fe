//! Shared test support: the moto server, the fault proxy and client helpers.
#![allow(dead_code)]

pub mod fleet_ice;
pub mod form;
#[allow(unused_imports)] // not every test binary starts moto
pub use kerf_e2e::moto;
pub mod proxy;
pub mod recorded;

use std::time::Duration;

use kerf_aws::{AwsSettings, Clients};

pub const REGION: &str = "us-west-2";
pub const CLUSTER: &str = "kerf-test";

/// Settings against a local endpoint, with fast retries and short timeouts.
pub fn settings(url: &str) -> AwsSettings {
    AwsSettings {
        initial_backoff: Duration::from_millis(20),
        max_backoff: Duration::from_millis(200),
        connect_timeout: Duration::from_secs(2),
        read_timeout: Duration::from_secs(20),
        attempt_timeout: Duration::from_secs(20),
        operation_timeout: Duration::from_secs(60),
        ..AwsSettings::local(REGION, url)
    }
}

pub async fn clients(url: &str) -> Clients {
    Clients::load(&settings(url)).await
}

pub fn strings(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

/// The repository root (`/work/main`).
pub fn repo_root() -> std::path::PathBuf {
    std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}
