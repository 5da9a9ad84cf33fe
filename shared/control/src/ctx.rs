//! What every reconciler runs with: the ports, the clock, the logger, the invocation's
//! metrics and the settings (Karpenter's defaults unless configured).

use std::sync::Arc;

use jiff::SignedDuration;

use crate::log::Logger;
use crate::metrics::Metrics;
use crate::ports::{Clock, Cloud, Cluster, Publisher};

/// Knobs, with Karpenter's defaults.
#[derive(Debug, Clone)]
pub struct Settings {
    /// The EKS cluster name (instance tags, logs).
    pub cluster_name: String,
    /// Namespace of Kerf's own objects (the decision Lease, the unavailable-offerings cache).
    pub namespace: String,
    /// How long a decision Lease is held without renewal.
    pub lease_duration: SignedDuration,
    /// A NodeClaim not launched within this time is deleted (Karpenter: 5 minutes).
    pub launch_timeout: SignedDuration,
    /// A launched NodeClaim not registered within this time is deleted (Karpenter: 15 minutes).
    pub registration_timeout: SignedDuration,
    /// A cluster instance with no NodeClaim is terminated once older than this.
    pub orphan_grace: SignedDuration,
    /// At most this many instance types go to one launch (the AWS provider's 60).
    pub max_instance_types: usize,
    /// Minimise launch cost beyond Karpenter's packing.
    pub optimize_cost: bool,
    /// Karpenter's own consolidation search (see `DisruptOptions::karpenter_search`); for
    /// comparisons with Karpenter's decisions, never in a deployment.
    pub karpenter_search: bool,
    /// Karpenter's AMI cadence, for comparisons with Karpenter's decisions, never in a
    /// deployment: a class's resolved AMIs change only in the first ten seconds of each such
    /// period (Karpenter re-resolves them every 5 minutes). `None`: on every pass.
    pub ami_refresh: Option<jiff::SignedDuration>,
    /// Emptiness waits for its validation 15 s after being recorded, as Karpenter's does
    /// (for comparisons with Karpenter's decisions); Kerf's own starts it at once.
    pub validate_emptiness: bool,
    /// Concurrent API calls per step (NodeClaim creates, launches, events).
    pub concurrency: usize,
    /// Karpenter's `NodeOverlay` feature gate: NodeOverlays change each pool's catalog.
    pub node_overlay: bool,
    /// Karpenter's `NodeRepair` feature gate: nodes unhealthy for too long are replaced.
    pub node_repair: bool,
    /// Karpenter's `StaticCapacity` feature gate: static NodePools keep `replicas` NodeClaims.
    pub static_capacity: bool,
    /// Karpenter's `ReservedCapacity` feature gate (on by default): capacity reservations are
    /// offered, preferred and launched into.
    pub reserved_capacity: bool,
    /// `MIN_VALUES_POLICY`: Karpenter's `--min-values-policy`.
    pub min_values_policy: kerf_engine::model::MinValuesPolicy,
}

impl Settings {
    /// Defaults for `cluster_name`, Kerf's objects in `namespace`.
    pub fn new(cluster_name: &str, namespace: &str) -> Self {
        Settings {
            cluster_name: cluster_name.to_string(),
            namespace: namespace.to_string(),
            lease_duration: SignedDuration::from_secs(60),
            launch_timeout: SignedDuration::from_mins(5),
            registration_timeout: SignedDuration::from_mins(15),
            orphan_grace: SignedDuration::from_mins(2),
            max_instance_types: kerf_labels::MAX_INSTANCE_TYPES,
            optimize_cost: true,
            karpenter_search: false,
            ami_refresh: None,
            validate_emptiness: false,
            concurrency: 32,
            min_values_policy: kerf_engine::model::MinValuesPolicy::Strict,
            node_overlay: false,
            node_repair: false,
            static_capacity: false,
            reserved_capacity: true,
        }
    }
}

/// The ports and services of one function instance (built once, reused by invocations).
pub struct Ctx<C, K, P> {
    pub cluster: C,
    pub cloud: K,
    pub publisher: P,
    pub clock: Arc<dyn Clock>,
    pub log: Logger,
    pub metrics: Arc<Metrics>,
    pub settings: Settings,
}

impl<C: Cluster, K: Cloud, P: Publisher> Ctx<C, K, P> {
    /// The current time.
    pub fn now(&self) -> jiff::Timestamp {
        self.clock.now()
    }
}

impl<C, K, P> std::fmt::Debug for Ctx<C, K, P> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Ctx")
            .field("settings", &self.settings)
            .finish_non_exhaustive()
    }
}
