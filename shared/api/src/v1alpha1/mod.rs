//! Karpenter's `karpenter.sh/v1alpha1` APIs: NodeOverlay (gate `NodeOverlay`).

pub mod nodeoverlay;

pub use nodeoverlay::{NodeOverlay, NodeOverlaySpec, NodeOverlayStatus};
