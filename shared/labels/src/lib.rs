//! Karpenter's well-known label keys, annotations, taints, finalizer and the instance-type
//! cap, defined once for every Kerf crate, as Karpenter keeps them in `labels.go` (core and
//! the AWS provider). No dependencies: constants and a few predicates over them.

pub mod aws;

/// Karpenter's API group.
pub const GROUP: &str = "karpenter.sh";

// ------------------------------------------------------------------ labels

pub const NODEPOOL: &str = "karpenter.sh/nodepool";
pub const CAPACITY_TYPE: &str = "karpenter.sh/capacity-type";
/// Set on a node when it registers.
pub const REGISTERED: &str = "karpenter.sh/registered";
/// Set on a node when it is initialized.
pub const INITIALIZED: &str = "karpenter.sh/initialized";
/// A node that opts out of NodeClaim-to-Node taint sync.
pub const DO_NOT_SYNC_TAINTS: &str = "karpenter.sh/do-not-sync-taints";
/// Added (value `karpenter`) when a node is tainted for termination.
pub const EXCLUDE_FROM_LOAD_BALANCERS: &str =
    "node.kubernetes.io/exclude-from-external-load-balancers";

pub const ZONE: &str = "topology.kubernetes.io/zone";
pub const REGION: &str = "topology.kubernetes.io/region";
pub const INSTANCE_TYPE: &str = "node.kubernetes.io/instance-type";
pub const ARCH: &str = "kubernetes.io/arch";
pub const OS: &str = "kubernetes.io/os";
pub const HOSTNAME: &str = "kubernetes.io/hostname";
pub const WINDOWS_BUILD: &str = "node.kubernetes.io/windows-build";
/// The label the API server puts on every namespace, naming it.
pub const NAMESPACE_NAME: &str = "kubernetes.io/metadata.name";

/// `karpenter.sh/capacity-type` values.
pub const CAPACITY_TYPE_ON_DEMAND: &str = "on-demand";
pub const CAPACITY_TYPE_SPOT: &str = "spot";
pub const CAPACITY_TYPE_RESERVED: &str = "reserved";

/// Labels pods may require even when no NodePool defines them (`WellKnownLabels`, with the
/// AWS provider's additions).
pub const WELL_KNOWN: [&str; 11] = [
    NODEPOOL,
    ZONE,
    REGION,
    INSTANCE_TYPE,
    ARCH,
    OS,
    CAPACITY_TYPE,
    WINDOWS_BUILD,
    aws::ZONE_ID,
    aws::PLACEMENT_GROUP_ID,
    aws::PLACEMENT_GROUP_PARTITION,
];

/// True for keys a pod may select on even when no NodePool declares them.
pub fn is_well_known(key: &str) -> bool {
    WELL_KNOWN.contains(&key) || aws::WELL_KNOWN_PREFIXES.iter().any(|p| key.starts_with(p))
}

/// Deprecated aliases and the stable keys they are rewritten to.
pub const NORMALIZED: [(&str, &str); 5] = [
    ("failure-domain.beta.kubernetes.io/zone", ZONE),
    ("failure-domain.beta.kubernetes.io/region", REGION),
    ("beta.kubernetes.io/arch", ARCH),
    ("beta.kubernetes.io/os", OS),
    ("beta.kubernetes.io/instance-type", INSTANCE_TYPE),
];

/// Rewrites a deprecated alias to its stable name.
pub fn normalize(key: &str) -> &str {
    NORMALIZED
        .iter()
        .find(|(alias, _)| *alias == key)
        .map_or(key, |(_, stable)| stable)
}

/// Keys a NodePool may not set: the `karpenter.sh` domain (except the capacity type) and
/// the hostname.
pub fn is_restricted(key: &str) -> bool {
    if key == HOSTNAME || key == NODEPOOL {
        return true;
    }
    let domain = key.split_once('/').map(|(d, _)| d).unwrap_or("");
    (domain == GROUP || domain.ends_with(".karpenter.sh")) && key != CAPACITY_TYPE
}

// ------------------------------------------------------------------ annotations

pub const DO_NOT_DISRUPT: &str = "karpenter.sh/do-not-disrupt";
pub const NODEPOOL_HASH: &str = "karpenter.sh/nodepool-hash";
pub const NODEPOOL_HASH_VERSION: &str = "karpenter.sh/nodepool-hash-version";
pub const NODECLAIM_TERMINATION_TIMESTAMP: &str = "karpenter.sh/nodeclaim-termination-timestamp";
/// The hash version Kerf stamps beside `karpenter.sh/nodepool-hash`. It differs from
/// Karpenter's (`v3`), so claims Karpenter stamped never count as drifted: drift needs equal
/// versions.
pub const KERF_NODEPOOL_HASH_VERSION: &str = "kerf-v1";
/// Written by the provisioner on an existing NodeClaim it nominates pods to: an RFC 3339 time
/// until which disruption leaves the claim alone (Karpenter's nomination protection).
pub const NOMINATED_UNTIL: &str = "kerf.dev/nominated-until";
/// On a NodePool: Kerf's dollar limit, the most its NodeClaims may cost per hour in USD
/// (a non-negative decimal, e.g. `"25.00"`), enforced like `spec.limits`.
pub const MAX_COST_PER_HOUR: &str = "kerf.dev/max-cost-per-hour";
/// A pod's cost of being deleted, as ReplicaSets read it (an integer).
pub const POD_DELETION_COST: &str = "controller.kubernetes.io/pod-deletion-cost";
/// Set on mirror (static) pods by the kubelet.
pub const MIRROR_POD: &str = "kubernetes.io/config.mirror";
/// Priority classes that make a pod critical (drained last).
pub const CRITICAL_PRIORITY_CLASSES: [&str; 2] =
    ["system-cluster-critical", "system-node-critical"];
pub const MIN_VALUES_RELAXED: &str = "karpenter.sh/nodeclaim-min-values-relaxed";
/// On a NodeClaim some of whose instance types a NodeOverlay's price reached ("true"): it
/// launches by the overlaid prices.
pub const PRICE_OVERLAY_APPLIED: &str = "karpenter.sh/price-overlay-applied";
/// On a NodeClaim some of whose instance types a NodeOverlay's capacity reached ("true").
pub const CAPACITY_OVERLAY_APPLIED: &str = "karpenter.sh/capacity-overlay-applied";
pub const COMPATIBILITY_PROVIDER: &str = "compatibility.karpenter.sh/provider";

/// NodeClaim and Node condition types.
pub mod conditions {
    pub const LAUNCHED: &str = "Launched";
    pub const REGISTERED: &str = "Registered";
    pub const INITIALIZED: &str = "Initialized";
    pub const READY: &str = "Ready";
    /// Set once `consolidateAfter` has passed since the last pod event.
    pub const CONSOLIDATABLE: &str = "Consolidatable";
    pub const DRIFTED: &str = "Drifted";
    /// Set while a disruption command owns the claim (reason Empty, Underutilized, Drifted).
    pub const DISRUPTION_REASON: &str = "DisruptionReason";
}

// ------------------------------------------------------------------ taints

/// Applied to nodes being disrupted (effect NoSchedule).
pub const DISRUPTED_TAINT: &str = "karpenter.sh/disrupted";
/// Set at kubelet registration, removed once labels and taints are synced (NoExecute).
pub const UNREGISTERED_TAINT: &str = "karpenter.sh/unregistered";
/// The taint a cordoned node carries.
pub const UNSCHEDULABLE_TAINT: &str = "node.kubernetes.io/unschedulable";
/// Taints that only exist while a node boots, ignored on uninitialized managed nodes.
pub const EPHEMERAL_TAINTS: [&str; 4] = [
    "node.kubernetes.io/not-ready",
    "node.kubernetes.io/unreachable",
    "node.cloudprovider.kubernetes.io/uninitialized",
    UNREGISTERED_TAINT,
];
/// Any taint with this key prefix is ephemeral too.
pub const READINESS_TAINT_PREFIX: &str = "readiness.k8s.io/";

/// True for the taints Karpenter ignores on nodes that are still booting.
pub fn is_ephemeral_taint(key: &str) -> bool {
    EPHEMERAL_TAINTS.contains(&key) || key.starts_with(READINESS_TAINT_PREFIX)
}

// ------------------------------------------------------------------ finalizer and limits

/// The finalizer on NodeClaims and Nodes Karpenter manages.
pub const TERMINATION_FINALIZER: &str = "karpenter.sh/termination";

/// At most this many instance types go to CreateFleet per NodeClaim (the AWS provider's
/// `maxInstanceTypes`).
pub const MAX_INSTANCE_TYPES: usize = 60;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aliases_normalize_to_stable_keys() {
        assert_eq!(normalize("failure-domain.beta.kubernetes.io/zone"), ZONE);
        assert_eq!(normalize("beta.kubernetes.io/arch"), ARCH);
        assert_eq!(normalize("team"), "team");
    }

    #[test]
    fn well_known_keys_include_the_aws_instance_labels() {
        assert!(is_well_known(ZONE));
        assert!(is_well_known("karpenter.k8s.aws/instance-family"));
        assert!(!is_well_known("team"));
        assert!(is_well_known(aws::PLACEMENT_GROUP_ID));
        assert!(is_well_known(aws::PLACEMENT_GROUP_PARTITION));
    }

    #[test]
    fn the_karpenter_domain_is_restricted_but_the_capacity_type() {
        assert!(is_restricted(NODEPOOL));
        assert!(is_restricted(HOSTNAME));
        assert!(is_restricted("karpenter.sh/anything"));
        assert!(is_restricted("sub.karpenter.sh/x"));
        assert!(!is_restricted(CAPACITY_TYPE));
        assert!(!is_restricted("team"));
    }

    #[test]
    fn booting_taints_are_ephemeral() {
        assert!(is_ephemeral_taint("node.kubernetes.io/not-ready"));
        assert!(is_ephemeral_taint("readiness.k8s.io/network"));
        assert!(!is_ephemeral_taint(DISRUPTED_TAINT));
    }
}
