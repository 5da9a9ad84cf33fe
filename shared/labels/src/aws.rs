//! The AWS provider's labels (`karpenter.k8s.aws`, `topology.k8s.aws`).

/// The provider's label domain.
pub const DOMAIN: &str = "karpenter.k8s.aws";
/// The label naming a node's EC2NodeClass.
pub const NODECLASS: &str = "karpenter.k8s.aws/ec2nodeclass";
pub const ZONE_ID: &str = "topology.k8s.aws/zone-id";
/// The EC2NodeClass hash a NodeClaim was launched with, and its version.
pub const EC2NODECLASS_HASH: &str = "karpenter.k8s.aws/ec2nodeclass-hash";
pub const EC2NODECLASS_HASH_VERSION: &str = "karpenter.k8s.aws/ec2nodeclass-hash-version";
/// The hash version Kerf stamps (Karpenter's is `v6`): claims Karpenter stamped never count
/// as drifted, since drift needs equal versions.
pub const KERF_EC2NODECLASS_HASH_VERSION: &str = "kerf-v1";
/// The EC2 tag (value `owned`) marking the resources Kerf creates for `cluster`.
pub fn cluster_tag(cluster: &str) -> String {
    format!("kubernetes.io/cluster/{cluster}")
}

/// The EC2 tag on Kerf's launch templates saying when a launch last used one (RFC 3339):
/// templates unused for long enough are deleted.
pub const LAST_USED_TAG: &str = "kerf.dev/last-used";

/// EC2 tag naming an instance's NodeClaim (the NodePool tag is `karpenter.sh/nodepool`).
pub const NODECLAIM_TAG: &str = "karpenter.sh/nodeclaim";
pub const INSTANCE_CATEGORY: &str = "karpenter.k8s.aws/instance-category";
pub const INSTANCE_FAMILY: &str = "karpenter.k8s.aws/instance-family";
pub const INSTANCE_GENERATION: &str = "karpenter.k8s.aws/instance-generation";
pub const INSTANCE_CPU: &str = "karpenter.k8s.aws/instance-cpu";
/// The id of the placement group a node was launched into (`spec.placementGroupSelector`).
pub const PLACEMENT_GROUP_ID: &str = "karpenter.k8s.aws/placement-group-id";
/// The partition (`1`..`PartitionCount`) of a node in a partition placement group; empty
/// until registration reads it from the instance when the launch did not name one.
pub const PLACEMENT_GROUP_PARTITION: &str = "karpenter.k8s.aws/placement-group-partition";

/// The capacity reservation a `reserved` node launched into, its kind (`default` or
/// `capacity-block`) and whether it can be interrupted (`true`/`false`).
pub const CAPACITY_RESERVATION_ID: &str = "karpenter.k8s.aws/capacity-reservation-id";
pub const CAPACITY_RESERVATION_TYPE: &str = "karpenter.k8s.aws/capacity-reservation-type";
pub const CAPACITY_RESERVATION_INTERRUPTIBLE: &str =
    "karpenter.k8s.aws/capacity-reservation-interruptible";
/// What the three reservation labels' keys start with.
pub const CAPACITY_RESERVATION_PREFIX: &str = "karpenter.k8s.aws/capacity-reservation-";
/// The three reservation labels: only reserved nodes carry them.
pub const RESERVATION_LABELS: [&str; 3] = [
    CAPACITY_RESERVATION_ID,
    CAPACITY_RESERVATION_TYPE,
    CAPACITY_RESERVATION_INTERRUPTIBLE,
];

/// Prefixes of the provider's well-known instance labels.
pub const WELL_KNOWN_PREFIXES: [&str; 2] = [
    "karpenter.k8s.aws/instance-",
    "karpenter.k8s.aws/capacity-reservation-",
];

/// The well-known `karpenter.k8s.aws/*` labels a NodePool may set or require.
pub const WELL_KNOWN: [&str; 29] = [
    "karpenter.k8s.aws/instance-tenancy",
    CAPACITY_RESERVATION_TYPE,
    CAPACITY_RESERVATION_ID,
    CAPACITY_RESERVATION_INTERRUPTIBLE,
    "karpenter.k8s.aws/ec2nodeclass",
    "karpenter.k8s.aws/instance-encryption-in-transit-supported",
    "karpenter.k8s.aws/nitro-sandbox",
    "karpenter.k8s.aws/instance-category",
    "karpenter.k8s.aws/instance-hypervisor",
    "karpenter.k8s.aws/instance-family",
    "karpenter.k8s.aws/instance-generation",
    "karpenter.k8s.aws/instance-local-nvme",
    "karpenter.k8s.aws/instance-size",
    "karpenter.k8s.aws/instance-cpu",
    "karpenter.k8s.aws/instance-cpu-manufacturer",
    "karpenter.k8s.aws/instance-cpu-sustained-clock-speed-mhz",
    "karpenter.k8s.aws/instance-memory",
    "karpenter.k8s.aws/instance-ebs-bandwidth",
    "karpenter.k8s.aws/instance-network-bandwidth",
    "karpenter.k8s.aws/instance-gpu-name",
    "karpenter.k8s.aws/instance-gpu-manufacturer",
    "karpenter.k8s.aws/instance-gpu-count",
    "karpenter.k8s.aws/instance-gpu-memory",
    "karpenter.k8s.aws/instance-accelerator-name",
    "karpenter.k8s.aws/instance-accelerator-manufacturer",
    "karpenter.k8s.aws/instance-accelerator-count",
    "karpenter.k8s.aws/instance-capability-flex",
    PLACEMENT_GROUP_ID,
    PLACEMENT_GROUP_PARTITION,
];
