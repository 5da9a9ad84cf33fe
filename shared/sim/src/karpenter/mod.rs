//! The real Karpenter beside Kerf: its KWOK provider (`sigs.k8s.io/karpenter/kwok`, built
//! from the Go module proxy by `scripts/karpenter.sh build`) run against a real control plane,
//! with an instance-types file generated from Kerf's catalog ([`catalog`]), driven through
//! the same scenario steps as Kerf ([`KarpenterCluster`], a [`crate::scenario::Cluster`]).

pub mod catalog;
mod cluster;
pub mod process;
mod setup;

use std::path::PathBuf;

pub use cluster::KarpenterCluster;
pub use process::{KarpenterProcess, Launch, Usage};

/// The namespace Karpenter runs in (`SYSTEM_NAMESPACE`).
pub const NAMESPACE: &str = "karpenter";

/// Failures running the real Karpenter.
#[derive(Debug, thiserror::Error)]
pub enum KarpenterError {
    #[error("{what}: {source}")]
    Io {
        what: String,
        source: std::io::Error,
    },
    #[error("karpenter exited ({status}); its log: {}", log.display())]
    Exited { status: String, log: PathBuf },
    #[error("karpenter did not report ready within 90 s; its log: {}", .0.display())]
    NotReady(PathBuf),
    #[error("{}: {message}", file.display())]
    Crd { file: PathBuf, message: String },
}

impl KarpenterError {
    fn io(what: &'static str) -> impl Fn(std::io::Error) -> KarpenterError {
        move |source| KarpenterError::Io {
            what: what.to_string(),
            source,
        }
    }

    fn io_at(path: PathBuf) -> impl Fn(std::io::Error) -> KarpenterError {
        move |source| KarpenterError::Io {
            what: path.display().to_string(),
            source,
        }
    }
}
