//! The two WebhookConfigurations, all pointing at one URL:
//!
//! | webhook | requests | failurePolicy | why that policy |
//! |---|---|---|---|
//! | `validation.kerf.dev` | NodePool, NodeClaim, EC2NodeClass CREATE/UPDATE by anyone but Kerf | `Fail` | an invalid NodePool or EC2NodeClass must not be stored; a person or a CD tool retries; Kerf's own writes never come here |
//! | `provisioning.kerf.dev` | `pods/status` UPDATE that makes a pod Unschedulable | `Ignore` | a hint: the provisioner's sweep finds the pod anyway |
//! | `startup.kerf.dev` | `pods/status` UPDATE that makes a pod Running | `Ignore` | a metric only |
//! | `podevents.kerf.dev` | the first DELETE of a pod bound to a node (a pod event: it restarts the node's `consolidateAfter`) | `Ignore` | a hint: disruption's timers fire anyway |
//! | `initialization.kerf.dev` | `nodes`, `nodes/status` UPDATE of an uninitialized Kerf node that became Ready or lost a taint, by anyone but Kerf | `Ignore` | a hint: the sweep initializes the node anyway |
//! | `registration.kerf.dev` (mutating) | Node CREATE of a Kerf node | `Ignore` | the node's labels and taints come from its user data; the patch only repeats them |
//!
//! `matchConditions` (CEL, evaluated by the API server) keep every other pod and node update
//! from reaching Lambda, and keep Kerf's own writes (its functions' groups, [`KERF_GROUPS`])
//! away from the webhook: Kerf never waits on, nor is refused by, its own webhook, so an
//! outage, a throttled function or a rotated secret never stops provisioning or termination.
//! Kerf never blocks a workload: pods and nodes fail open. The validation webhook only
//! repeats what the CRDs' schemas do not say; a refusal names every problem.

use serde_json::{Value, json};

/// The name of both configurations.
pub const NAME: &str = "kerf";

/// A pod whose PodScheduled condition says kube-scheduler could not place it.
pub const POD_UNSCHEDULABLE: &str = "has(object.status) && has(object.status.conditions) && \
    object.status.conditions.exists(c, c.type == 'PodScheduled' && c.status == 'False' && \
    has(c.reason) && c.reason == 'Unschedulable')";

/// The same pod was not unschedulable before this update (one hint per transition).
pub const POD_NEWLY_UNSCHEDULABLE: &str = "!(has(oldObject.status) && \
    has(oldObject.status.conditions) && oldObject.status.conditions.exists(c, \
    c.type == 'PodScheduled' && c.status == 'False' && has(c.reason) && \
    c.reason == 'Unschedulable'))";

/// A pod whose phase is Running now and was not before this update.
pub const POD_NEWLY_RUNNING: &str = "has(object.status) && has(object.status.phase) && \
    object.status.phase == 'Running' && !(has(oldObject.status) && \
    has(oldObject.status.phase) && oldObject.status.phase == 'Running')";

/// A pod bound to a node, not already being deleted (the first DELETE, not the kubelet's).
pub const POD_LEAVES_NODE: &str = "has(oldObject.spec.nodeName) && \
    oldObject.spec.nodeName != '' && !has(oldObject.metadata.deletionTimestamp)";

/// A node launched by Kerf (it registers with its NodePool's label).
pub const KERF_NODE: &str =
    "has(object.metadata.labels) && 'karpenter.sh/nodepool' in object.metadata.labels";

/// A Kerf node whose NodeClaim is not initialized yet.
pub const NODE_NOT_INITIALIZED: &str = "!has(object.metadata.labels) || \
    !('karpenter.sh/initialized' in object.metadata.labels) || \
    object.metadata.labels['karpenter.sh/initialized'] != 'true'";

/// The node became Ready, or lost a taint, with this update.
pub const NODE_PROGRESSED: &str = "(has(object.status) && has(object.status.conditions) && \
    object.status.conditions.exists(c, c.type == 'Ready' && c.status == 'True') && \
    !(has(oldObject.status) && has(oldObject.status.conditions) && \
    oldObject.status.conditions.exists(c, c.type == 'Ready' && c.status == 'True'))) || \
    (has(object.spec) && has(object.spec.taints) ? size(object.spec.taints) : 0) < \
    (has(oldObject.spec) && has(oldObject.spec.taints) ? size(oldObject.spec.taints) : 0)";

/// The Kubernetes groups Kerf's functions are mapped to (the stack's EKS access entries).
pub const KERF_GROUPS: [&str; 5] = [
    "kerf:provisioner",
    "kerf:termination",
    "kerf:disruption",
    "kerf:interruption",
    "kerf:webhook",
];

/// The request does not come from one of Kerf's functions.
pub fn not_kerf() -> String {
    let groups: Vec<String> = KERF_GROUPS.iter().map(|g| format!("'{g}'")).collect();
    format!(
        "!(has(request.userInfo.groups) && request.userInfo.groups.exists(g, g in [{}]))",
        groups.join(", ")
    )
}

fn condition(name: &str, expression: &str) -> Value {
    json!({"name": name, "expression": expression})
}

fn rule(group: &str, resources: &[&str], operations: &[&str]) -> Value {
    json!({"apiGroups": [group], "apiVersions": ["v1"], "resources": resources,
           "operations": operations, "scope": "*"})
}

fn webhook(name: &str, url: &str, fail: bool, timeout: u32, side_effects: &str) -> Value {
    json!({
        "name": name,
        "admissionReviewVersions": ["v1"],
        "clientConfig": {"url": url},
        "failurePolicy": if fail { "Fail" } else { "Ignore" },
        "matchPolicy": "Equivalent",
        "sideEffects": side_effects,
        "timeoutSeconds": timeout,
    })
}

fn metadata(cluster: Option<&str>) -> Value {
    let mut m = json!({"name": NAME, "labels": {"app.kubernetes.io/name": "kerf",
        "app.kubernetes.io/managed-by": "kerf"}});
    if let Some(c) = cluster {
        m["annotations"] = json!({"kerf.dev/cluster": c});
    }
    m
}

/// Kerf's CRDs written by anyone but Kerf: invalid objects are refused, and refused too
/// when Kerf cannot answer.
pub fn validation(url: &str) -> Value {
    let mut w = webhook("validation.kerf.dev", url, true, 10, "None");
    w["rules"] = json!([
        rule(
            "karpenter.sh",
            &["nodepools", "nodeclaims"],
            &["CREATE", "UPDATE"]
        ),
        rule(
            "karpenter.k8s.aws",
            &["ec2nodeclasses"],
            &["CREATE", "UPDATE"]
        ),
    ]);
    w["matchConditions"] = json!([condition("not-kerf", &not_kerf())]);
    w
}

/// Pods that have just become unschedulable: a provisioning request.
pub fn provisioning(url: &str) -> Value {
    let mut w = webhook("provisioning.kerf.dev", url, false, 3, "NoneOnDryRun");
    w["rules"] = json!([rule("", &["pods/status"], &["UPDATE"])]);
    w["matchConditions"] = json!([
        condition("pod-unschedulable", POD_UNSCHEDULABLE),
        condition("newly-unschedulable", POD_NEWLY_UNSCHEDULABLE),
    ]);
    w
}

/// Pods that have just started running: timed for `karpenter_pods_startup_duration_seconds`.
pub fn startup(url: &str) -> Value {
    let mut w = webhook("startup.kerf.dev", url, false, 3, "None");
    w["rules"] = json!([rule("", &["pods/status"], &["UPDATE"])]);
    w["matchConditions"] = json!([condition("newly-running", POD_NEWLY_RUNNING)]);
    w
}

/// Pods deleted from nodes: a pod event for the disruption function.
pub fn pod_events(url: &str) -> Value {
    let mut w = webhook("podevents.kerf.dev", url, false, 3, "NoneOnDryRun");
    w["rules"] = json!([rule("", &["pods"], &["DELETE"])]);
    w["matchConditions"] = json!([condition("leaves-node", POD_LEAVES_NODE)]);
    w
}

/// Kerf nodes that may have finished initializing: a hint to the provisioner.
pub fn initialization(url: &str) -> Value {
    let mut w = webhook("initialization.kerf.dev", url, false, 3, "NoneOnDryRun");
    w["rules"] = json!([rule("", &["nodes", "nodes/status"], &["UPDATE"])]);
    w["matchConditions"] = json!([
        condition("kerf-node", KERF_NODE),
        condition("not-initialized", NODE_NOT_INITIALIZED),
        condition("ready-or-untainted", NODE_PROGRESSED),
        condition("not-kerf", &not_kerf()),
    ]);
    w
}

/// Kerf nodes as they are created: the registration patch from their NodeClaim.
pub fn registration(url: &str) -> Value {
    let mut w = webhook("registration.kerf.dev", url, false, 5, "NoneOnDryRun");
    w["rules"] = json!([rule("", &["nodes"], &["CREATE"])]);
    w["reinvocationPolicy"] = json!("Never");
    w["matchConditions"] = json!([condition("kerf-node", KERF_NODE)]);
    w
}

/// The ValidatingWebhookConfiguration and the MutatingWebhookConfiguration for `url`.
pub fn configurations(url: &str, cluster: Option<&str>) -> Vec<Value> {
    let api_version = "admissionregistration.k8s.io/v1";
    vec![
        json!({"apiVersion": api_version, "kind": "ValidatingWebhookConfiguration",
               "metadata": metadata(cluster),
               "webhooks": [validation(url), provisioning(url), startup(url),
                            pod_events(url), initialization(url)]}),
        json!({"apiVersion": api_version, "kind": "MutatingWebhookConfiguration",
               "metadata": metadata(cluster),
               "webhooks": [registration(url)]}),
    ]
}
