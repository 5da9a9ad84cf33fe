//! The one table the checks run from. Adding a function is one entry in [`FUNCTIONS`]; the
//! checks then demand its template resource, role, access entry and RBAC. Entries whose crate
//! does not exist yet are checked only for the queues and parameters they will use.
//!
//! Everything else the checks compare is derived: the AWS actions and Kubernetes verbs from
//! the sources (`calls.rs`), the interruption kinds from the event parser, the environment
//! variables from the configuration reader.

/// How a function is invoked.
pub enum Trigger {
    /// The Lambda Function URL (auth type NONE; the secret is a path segment).
    Url,
    /// An SQS event source (logical id of the queue) with partial batch failures.
    Queue(&'static str),
    /// An EventBridge Scheduler schedule whose expression is this template parameter.
    Schedule(&'static str),
}

/// One function crate under `functions/`.
pub struct Function {
    pub dir: &'static str,
    pub binary: &'static str,
    pub logical_id: &'static str,
    /// The Kubernetes group its access entry maps its role to.
    pub group: &'static str,
    /// Its RBAC manifest.
    pub rbac: &'static str,
    pub triggers: &'static [Trigger],
    /// Function-specific environment: variable → the resource its value names.
    pub env: &'static [(&'static str, &'static str)],
    /// Decisions that must not run concurrently: reserved concurrency 1.
    pub serialized: bool,
}

pub const FUNCTIONS: &[Function] = &[
    Function {
        dir: "functions/webhook",
        binary: "kerf-webhook",
        logical_id: "WebhookFunction",
        group: "kerf:webhook",
        rbac: "infra/rbac/webhook.yaml",
        triggers: &[Trigger::Url],
        env: &[
            ("KERF_PROVISIONING_QUEUE_URL", "ProvisioningQueue"),
            ("KERF_DISRUPTION_QUEUE_URL", "DisruptionQueue"),
            ("KERF_WEBHOOK_SECRET_PARAMETER", "WebhookSecret"),
        ],
        serialized: false,
    },
    Function {
        dir: "functions/provisioner",
        binary: "kerf-provisioner",
        logical_id: "ProvisionerFunction",
        group: "kerf:provisioner",
        rbac: "infra/rbac/provisioner.yaml",
        triggers: &[
            Trigger::Queue("ProvisioningQueue"),
            Trigger::Schedule("ProvisionerSchedule"),
        ],
        env: &[("KERF_PROVISIONING_QUEUE_URL", "ProvisioningQueue")],
        serialized: true,
    },
    Function {
        dir: "functions/termination",
        binary: "kerf-termination",
        logical_id: "TerminationFunction",
        group: "kerf:termination",
        rbac: "infra/rbac/termination.yaml",
        triggers: &[Trigger::Queue("TerminationQueue")],
        env: &[
            ("KERF_TERMINATION_QUEUE_URL", "TerminationQueue"),
            ("KERF_DISRUPTION_QUEUE_URL", "DisruptionQueue"),
        ],
        serialized: false,
    },
    Function {
        dir: "functions/interruption",
        binary: "kerf-interruption",
        logical_id: "InterruptionFunction",
        group: "kerf:interruption",
        rbac: "infra/rbac/interruption.yaml",
        triggers: &[Trigger::Queue("InterruptionQueue")],
        env: &[("KERF_TERMINATION_QUEUE_URL", "TerminationQueue")],
        serialized: false,
    },
    Function {
        dir: "functions/disruption",
        binary: "kerf-disruption",
        logical_id: "DisruptionFunction",
        group: "kerf:disruption",
        rbac: "infra/rbac/disruption.yaml",
        triggers: &[
            Trigger::Queue("DisruptionQueue"),
            Trigger::Schedule("DisruptionSchedule"),
        ],
        env: &[
            ("KERF_TERMINATION_QUEUE_URL", "TerminationQueue"),
            ("KERF_DISRUPTION_QUEUE_URL", "DisruptionQueue"),
        ],
        // Its timer queue's mapping runs up to two at once; the decision Lease serializes them.
        serialized: false,
    },
];

/// Variables the template sets ahead of the code that will read them. Each must not be read
/// yet (then it leaves this list).
pub const PENDING_ENV: &[&str] = &[];

/// Actions an operation needs besides its own: CreateFleet launches the instances of its
/// launch templates, tags what it creates and passes the node role; CreateLaunchTemplate tags
/// the template.
pub const IMPLIED: &[(&str, &[&str])] = &[
    (
        "ec2:CreateFleet",
        &["ec2:RunInstances", "ec2:CreateTags", "iam:PassRole"],
    ),
    ("ec2:CreateLaunchTemplate", &["ec2:CreateTags"]),
];

/// What every function's role holds for Lambda itself: writing its log group.
pub const LOGGING: &[&str] = &["logs:CreateLogStream", "logs:PutLogEvents"];

/// What an SQS event source mapping needs on its queue.
pub const SQS_TRIGGER: &[&str] = &[
    "sqs:ReceiveMessage",
    "sqs:DeleteMessage",
    "sqs:GetQueueAttributes",
];

/// Reading the webhook secret through Parameter Store's reference to Secrets Manager.
pub const SECRET_ENV: (&str, &str) = (
    "KERF_WEBHOOK_SECRET_PARAMETER",
    "secretsmanager:GetSecretValue",
);

/// Kubernetes types the code opens an `Api` for: (type, API group, resource).
pub const KUBE_TYPES: &[(&str, &str, &str)] = &[
    ("Pod", "", "pods"),
    ("Namespace", "", "namespaces"),
    ("Node", "", "nodes"),
    ("Event", "", "events"),
    ("ConfigMap", "", "configmaps"),
    ("Lease", "coordination.k8s.io", "leases"),
    ("DaemonSet", "apps", "daemonsets"),
    ("PodDisruptionBudget", "policy", "poddisruptionbudgets"),
    ("PersistentVolumeClaim", "", "persistentvolumeclaims"),
    ("PersistentVolume", "", "persistentvolumes"),
    ("StorageClass", "storage.k8s.io", "storageclasses"),
    ("CSINode", "storage.k8s.io", "csinodes"),
    ("VolumeAttachment", "storage.k8s.io", "volumeattachments"),
    ("NodePool", "karpenter.sh", "nodepools"),
    ("NodeClaim", "karpenter.sh", "nodeclaims"),
    ("NodeOverlay", "karpenter.sh", "nodeoverlays"),
    ("EC2NodeClass", "karpenter.k8s.aws", "ec2nodeclasses"),
];

/// Types kept in Kerf's own namespace, with the one object's name (granted by a Role there).
pub fn own_namespace_object(kind: &str) -> Option<&'static str> {
    match kind {
        "Lease" => Some(kerf_control::lease::LEASE_NAME),
        "ConfigMap" => Some(kerf_catalog::unavailable::CONFIGMAP_NAME),
        _ => None,
    }
}

/// The EC2 resource types a launch uses without creating them (no tag to condition on).
pub const UNTAGGED_LAUNCH_RESOURCES: &[&str] = &[
    "image",
    "snapshot",
    "security-group",
    "subnet",
    "capacity-reservation",
    "placement-group",
];
