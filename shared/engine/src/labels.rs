//! Well-known label keys, their deprecated aliases, and which keys pods may require without
//! a NodePool declaring them.

pub const NODEPOOL: &str = "karpenter.sh/nodepool";
pub const CAPACITY_TYPE: &str = "karpenter.sh/capacity-type";
pub const ZONE: &str = "topology.kubernetes.io/zone";
pub const REGION: &str = "topology.kubernetes.io/region";
pub const INSTANCE_TYPE: &str = "node.kubernetes.io/instance-type";
pub const ARCH: &str = "kubernetes.io/arch";
pub const OS: &str = "kubernetes.io/os";
pub const HOSTNAME: &str = "kubernetes.io/hostname";
pub const WINDOWS_BUILD: &str = "node.kubernetes.io/windows-build";
pub const NODECLASS: &str = "karpenter.k8s.aws/ec2nodeclass";
pub const INITIALIZED: &str = "karpenter.sh/initialized";
pub const REGISTERED: &str = "karpenter.sh/registered";
/// The key a required node-affinity `matchFields` term on `metadata.name` becomes: no label
/// can have it (`:` is not allowed in label keys), and only existing nodes carry it.
pub const NODE_NAME_FIELD: &str = "kerf.dev/field:metadata.name";
/// The label the API server puts on every namespace, naming it.
pub const NAMESPACE_NAME: &str = "kubernetes.io/metadata.name";

/// The taint Karpenter puts on nodes being disrupted.
pub const DISRUPTED_TAINT: &str = "karpenter.sh/disrupted";
/// The taint a cordoned node carries.
pub const UNSCHEDULABLE_TAINT: &str = "node.kubernetes.io/unschedulable";

const WELL_KNOWN: [&str; 9] = [
    NODEPOOL,
    ZONE,
    REGION,
    INSTANCE_TYPE,
    ARCH,
    OS,
    CAPACITY_TYPE,
    WINDOWS_BUILD,
    "topology.k8s.aws/zone-id",
];

/// Labels the AWS provider registers as well known (all `karpenter.k8s.aws/instance-*`).
const WELL_KNOWN_PREFIXES: [&str; 2] = [
    "karpenter.k8s.aws/instance-",
    "karpenter.k8s.aws/capacity-reservation-",
];

/// True for keys a pod may select on even when no NodePool declares them.
pub fn is_well_known(key: &str) -> bool {
    WELL_KNOWN.contains(&key) || WELL_KNOWN_PREFIXES.iter().any(|p| key.starts_with(p))
}

/// Rewrites deprecated aliases to their stable names.
pub fn normalize(key: &str) -> String {
    match key {
        "failure-domain.beta.kubernetes.io/zone" => ZONE.to_string(),
        "failure-domain.beta.kubernetes.io/region" => REGION.to_string(),
        "beta.kubernetes.io/arch" => ARCH.to_string(),
        "beta.kubernetes.io/os" => OS.to_string(),
        "beta.kubernetes.io/instance-type" => INSTANCE_TYPE.to_string(),
        other => other.to_string(),
    }
}

/// Keys a NodePool may not set (Karpenter's restricted label domains).
pub fn is_restricted(key: &str) -> bool {
    if key == HOSTNAME || key == NODEPOOL {
        return true;
    }
    let domain = key.split_once('/').map(|(d, _)| d).unwrap_or("");
    (domain == "karpenter.sh" || domain.ends_with(".karpenter.sh")) && key != CAPACITY_TYPE
}
