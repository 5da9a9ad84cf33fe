//! The snapshot the engine decides on: plain data built by adapters from Kubernetes objects
//! and the instance catalog. Nothing here talks to anything.

mod constraints;
mod disruption;
mod options;
mod volumes;

pub use constraints::{
    AffinityTerm, Effect, HostPort, LabelSelector, Taint, Toleration, TopologySpread, WeightedTerm,
    WhenUnsatisfiable,
};
pub use disruption::{
    Ami, Budget, BudgetNodes, Condition, ConditionStatus, ConsolidationPolicy, DisruptionReason,
    NodeClass, OwnerKind, Pdb, PoolDisruption, ResolvedPlacementGroup,
};
pub use options::MinValuesPolicy;
pub use volumes::{
    AttachedVolume, EBS_CSI_DRIVER, PodVolumes, VolumeTopology, VolumeWait, VolumeWaitKind,
};

use std::collections::BTreeMap;
use std::sync::Arc;

use kerf_catalog::{Catalog, Resources};

use crate::requirements::SelectorRequirement;

/// Seconds since the Unix epoch.
pub type Timestamp = i64;

/// What a pod needs from a node, flattened from its spec.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PodSpec {
    /// Effective requests (containers, init containers, sidecars, overhead), plus `pods: 1`.
    pub requests: Resources,
    pub node_selector: BTreeMap<String, String>,
    /// Required node affinity: terms are ORed, expressions within a term ANDed.
    pub required_terms: Vec<Vec<SelectorRequirement>>,
    pub preferred_terms: Vec<WeightedTerm<Vec<SelectorRequirement>>>,
    pub tolerations: Vec<Toleration>,
    pub spread: Vec<TopologySpread>,
    pub affinity: Vec<AffinityTerm>,
    pub preferred_affinity: Vec<WeightedTerm<AffinityTerm>>,
    pub anti_affinity: Vec<AffinityTerm>,
    pub preferred_anti_affinity: Vec<WeightedTerm<AffinityTerm>>,
    pub host_ports: Vec<HostPort>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Pod {
    pub namespace: String,
    pub name: String,
    pub uid: String,
    pub labels: BTreeMap<String, String>,
    pub node_name: Option<String>,
    pub created: Timestamp,
    /// `Pending`, `Running`, `Succeeded`, `Failed` or empty.
    pub phase: String,
    pub terminating: bool,
    /// Owned by a DaemonSet.
    pub daemonset: Option<String>,
    pub spec: PodSpec,
    pub annotations: BTreeMap<String, String>,
    /// `spec.priority` (0 when unset).
    pub priority: i32,
    /// `spec.priorityClassName`.
    pub priority_class: String,
    /// `status.startTime`.
    pub start_time: Option<Timestamp>,
    /// The `Ready` condition is True (pods reporting no conditions count as ready).
    pub ready: bool,
    /// The kind of its first owner.
    pub owner: OwnerKind,
    /// A mirror pod (created by the kubelet from a static manifest).
    pub mirror: bool,
    /// Its persistent volumes' topology, attachments and readiness.
    pub volumes: PodVolumes,
}

impl Default for Pod {
    fn default() -> Self {
        Pod {
            namespace: String::new(),
            name: String::new(),
            uid: String::new(),
            labels: BTreeMap::new(),
            node_name: None,
            created: 0,
            phase: String::new(),
            terminating: false,
            daemonset: None,
            spec: PodSpec::default(),
            annotations: BTreeMap::new(),
            priority: 0,
            priority_class: String::new(),
            start_time: None,
            ready: true,
            owner: OwnerKind::None,
            mirror: false,
            volumes: PodVolumes::default(),
        }
    }
}

impl Pod {
    /// `namespace/name`.
    pub fn key(&self) -> String {
        format!("{}/{}", self.namespace, self.name)
    }

    /// Terminal pods no longer hold node resources.
    pub fn is_terminal(&self) -> bool {
        self.phase == "Succeeded" || self.phase == "Failed"
    }

    /// A pod the provisioner must place: unbound, alive, Pending.
    pub fn is_pending(&self) -> bool {
        self.node_name.is_none()
            && !self.terminating
            && (self.phase.is_empty() || self.phase == "Pending")
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Node {
    pub name: String,
    pub labels: BTreeMap<String, String>,
    pub taints: Vec<Taint>,
    pub allocatable: Resources,
    pub capacity: Resources,
    /// `spec.unschedulable` (cordoned).
    pub unschedulable: bool,
    pub deleting: bool,
    pub provider_id: String,
    pub annotations: BTreeMap<String, String>,
    /// The `Ready` condition is True (nodes reporting no conditions count as ready).
    pub ready: bool,
    /// CSI attach limits by driver (its CSINode's `allocatable.count`); a driver not listed
    /// has no limit.
    pub volume_limits: BTreeMap<String, u32>,
}

impl Default for Node {
    fn default() -> Self {
        Node {
            name: String::new(),
            labels: BTreeMap::new(),
            taints: Vec::new(),
            allocatable: Resources::default(),
            capacity: Resources::default(),
            unschedulable: false,
            deleting: false,
            provider_id: String::new(),
            annotations: BTreeMap::new(),
            ready: true,
            volume_limits: BTreeMap::new(),
        }
    }
}

/// A NodeClaim that already exists in the cluster.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct NodeClaim {
    pub name: String,
    pub node_pool: String,
    pub labels: BTreeMap<String, String>,
    pub requirements: Vec<SelectorRequirement>,
    pub taints: Vec<Taint>,
    pub startup_taints: Vec<Taint>,
    /// `status.allocatable`, empty before launch.
    pub allocatable: Resources,
    pub capacity: Resources,
    /// `status.nodeName` once registered.
    pub node_name: Option<String>,
    pub provider_id: String,
    pub deleting: bool,
    /// `metadata.creationTimestamp`.
    pub created: Timestamp,
    pub annotations: BTreeMap<String, String>,
    /// `status.conditions`.
    pub conditions: Vec<Condition>,
    /// `status.lastPodEventTime`.
    pub last_pod_event: Option<Timestamp>,
    /// `status.imageID`.
    pub image_id: String,
    /// `spec.expireAfter` in seconds; `None` is `Never`.
    pub expire_after: Option<i64>,
    /// `spec.terminationGracePeriod` in seconds; `None` waits for the drain forever.
    pub termination_grace_period: Option<i64>,
    /// `spec.nodeClassRef.name`.
    pub node_class: String,
    /// Until when the provisioner counts on this claim for pods it nominated
    /// (`kerf.dev/nominated-until`).
    pub nominated_until: Option<Timestamp>,
    /// The instance's subnet, when the control layer knows it (subnet drift).
    pub subnet_id: Option<String>,
    /// The instance's security groups, when the control layer knows them (SG drift).
    pub security_group_ids: Option<Vec<String>>,
    /// The capacity reservation the instance runs in, when the control layer knows it
    /// (capacity reservation drift).
    pub capacity_reservation: Option<String>,
}

impl NodeClaim {
    /// The condition of `kind`, if present.
    pub fn condition(&self, kind: &str) -> Option<&Condition> {
        self.conditions.iter().find(|c| c.kind == kind)
    }

    /// True when the condition of `kind` is present and True.
    pub fn is_true(&self, kind: &str) -> bool {
        self.condition(kind)
            .is_some_and(|c| c.status == ConditionStatus::True)
    }
}

/// A NodePool with its EC2NodeClass-derived catalog.
#[derive(Clone, Debug, PartialEq)]
pub struct NodePool {
    pub name: String,
    pub weight: i32,
    pub labels: BTreeMap<String, String>,
    pub requirements: Vec<SelectorRequirement>,
    pub taints: Vec<Taint>,
    pub startup_taints: Vec<Taint>,
    /// `spec.limits`: only the listed resources are limited (`nodes` counts nodes).
    pub limits: Option<Resources>,
    /// The EC2NodeClass this pool launches with.
    pub node_class: String,
    /// The instance types this pool may launch (derived from its EC2NodeClass).
    pub catalog: Arc<Catalog>,
    pub deleting: bool,
    /// `spec.disruption`.
    pub disruption: PoolDisruption,
    /// `spec.template.spec.expireAfter` in seconds; `None` is `Never`.
    pub expire_after: Option<i64>,
    /// `spec.template.spec.terminationGracePeriod` in seconds.
    pub termination_grace_period: Option<i64>,
    /// Kerf's hash of the template (`kerf_convert::hash::nodepool_hash`).
    pub hash: String,
    /// The version of that hash (`kerf_labels::KERF_NODEPOOL_HASH_VERSION`).
    pub hash_version: String,
    /// `spec.replicas`: a static pool, never consolidated.
    pub replicas: Option<i64>,
    /// Why the pool is not ready (its EC2NodeClass missing, its `Ready` condition false): it
    /// launches nothing and its nodes are left alone, and pods are told why.
    pub unready: Option<String>,
    /// Kerf's dollar limit in USD per hour (`kerf.dev/max-cost-per-hour`), enforced like
    /// `limits` (see `cost`).
    pub max_cost_per_hour: Option<f64>,
}

impl NodePool {
    /// Whether the pool takes part in provisioning and disruption: not being deleted, ready.
    pub fn active(&self) -> bool {
        !self.deleting && self.unready.is_none()
    }
}

impl Default for NodePool {
    fn default() -> Self {
        NodePool {
            name: String::new(),
            weight: 0,
            labels: BTreeMap::new(),
            requirements: Vec::new(),
            taints: Vec::new(),
            startup_taints: Vec::new(),
            limits: None,
            node_class: String::new(),
            catalog: Arc::default(),
            deleting: false,
            disruption: PoolDisruption::default(),
            expire_after: Some(720 * 3600),
            termination_grace_period: None,
            hash: String::new(),
            hash_version: String::new(),
            replicas: None,
            unready: None,
            max_cost_per_hour: None,
        }
    }
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct DaemonSet {
    pub namespace: String,
    pub name: String,
    pub pod: PodSpec,
}

/// Everything the provisioner decides on.
#[derive(Clone, Debug, Default)]
pub struct Snapshot {
    pub pods: Vec<Pod>,
    pub nodes: Vec<Node>,
    pub node_claims: Vec<NodeClaim>,
    pub node_pools: Vec<NodePool>,
    pub daemon_sets: Vec<DaemonSet>,
    /// Labels of the namespaces the input names (`kubernetes.io/metadata.name` is implied).
    pub namespaces: BTreeMap<String, BTreeMap<String, String>>,
    pub now: Timestamp,
    /// PodDisruptionBudgets, every namespace.
    pub pdbs: Vec<Pdb>,
    /// EC2NodeClasses (drift).
    pub node_classes: Vec<NodeClass>,
}

/// Knobs with Karpenter's defaults.
#[derive(Clone, Debug)]
pub struct Options {
    /// Honour preferences until they must be relaxed (`PREFERENCE_POLICY=Respect`).
    pub respect_preferences: bool,
    /// At most this many instance types per NodeClaim (the AWS provider sends 60).
    pub max_instance_types: usize,
    /// Seed for NodeClaim name suffixes (adapters derive it from the input).
    pub seed: u64,
    /// Minimise launch cost beyond Karpenter's first-fit packing.
    pub optimize_cost: bool,
    /// What to do when a NodeClaim cannot meet its requirements' `minValues`
    /// (`MIN_VALUES_POLICY`).
    pub min_values_policy: MinValuesPolicy,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            respect_preferences: true,
            max_instance_types: kerf_labels::MAX_INSTANCE_TYPES,
            seed: 0,
            optimize_cost: true,
            min_values_policy: MinValuesPolicy::Strict,
        }
    }
}
