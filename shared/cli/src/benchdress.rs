//! The fields `kubectl get … -o yaml` prints beyond what planning reads: the defaults
//! kube-apiserver fills in (tolerations, the service-account token volume, pull and
//! termination-message policies, QoS class), status written by the kubelet and the scheduler
//! (conditions, container statuses, pod IPs, a node's images and system info), owner
//! references and resource versions. The benchmark generators add them with [`Fields::Dump`],
//! so `kerf plan` is measured on dumps of the size a real cluster gives, not only on the bare
//! fields.

use serde_json::{Value, json};

/// Which fields the generated objects carry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fields {
    /// Only what the shape needs.
    Bare,
    /// Everything a `kubectl get -o yaml` dump of a running cluster shows.
    Dump,
}

impl Fields {
    /// Parses a generator's argument: `bare` or `dump`.
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "bare" => Some(Fields::Bare),
            "dump" => Some(Fields::Dump),
            _ => None,
        }
    }
}

const TOKEN_MOUNT: &str = "/var/run/secrets/kubernetes.io/serviceaccount";
const STAMP: &str = "2026-05-20T12:00:00Z";

/// Adds the server defaults and status a dump shows to a pod; `n` makes its IPs and ids
/// distinct. A pod with `spec.nodeName` gets a running status, any other a pending one.
pub fn pod(p: &mut Value, n: usize) {
    let volume = format!("kube-api-access-{:05x}", n % 0xfffff);
    let meta = &mut p["metadata"];
    meta["resourceVersion"] = json!((100_000 + n).to_string());
    meta["generateName"] = json!(format!("{}-", meta["name"].as_str().unwrap_or("pod")));
    if meta.get("ownerReferences").is_none() {
        meta["ownerReferences"] = json!([{"apiVersion": "apps/v1", "kind": "ReplicaSet",
            "name": "app-7c9f8d6b5", "uid": format!("0b7c1e2a-0000-4000-8000-{:012x}", n % 64),
            "controller": true, "blockOwnerDeletion": true}]);
    }
    let labels = &mut meta["labels"];
    labels["pod-template-hash"] = json!("7c9f8d6b5");
    let spec = &mut p["spec"];
    for c in spec["containers"].as_array_mut().into_iter().flatten() {
        container(c, &volume);
    }
    let defaults = json!({
        "dnsPolicy": "ClusterFirst", "enableServiceLinks": true, "preemptionPolicy": "PreemptLowerPriority",
        "priority": 0, "restartPolicy": "Always", "schedulerName": "default-scheduler",
        "securityContext": {}, "serviceAccount": "default", "serviceAccountName": "default",
        "terminationGracePeriodSeconds": 30,
        "tolerations": [
            {"effect": "NoExecute", "key": "node.kubernetes.io/not-ready", "operator": "Exists", "tolerationSeconds": 300},
            {"effect": "NoExecute", "key": "node.kubernetes.io/unreachable", "operator": "Exists", "tolerationSeconds": 300}],
        "volumes": [{"name": volume, "projected": {"defaultMode": 420, "sources": [
            {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
            {"configMap": {"items": [{"key": "ca.crt", "path": "ca.crt"}], "name": "kube-root-ca.crt"}},
            {"downwardAPI": {"items": [{"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"}, "path": "namespace"}]}}]}}]
    });
    merge(spec, defaults);
    let bound = spec.get("nodeName").is_some();
    p["status"] = if bound { running(n) } else { pending() };
}

fn container(c: &mut Value, volume: &str) {
    let requests = c["resources"]["requests"].clone();
    c["resources"]["limits"] = json!({"memory": requests["memory"]});
    merge(
        c,
        json!({
            "imagePullPolicy": "IfNotPresent",
            "ports": [{"containerPort": 8080, "name": "http", "protocol": "TCP"}],
            "env": [{"name": "LOG_LEVEL", "value": "info"},
                    {"name": "POD_NAME", "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.name"}}}],
            "readinessProbe": {"failureThreshold": 3, "httpGet": {"path": "/healthz", "port": "http", "scheme": "HTTP"},
                               "periodSeconds": 10, "successThreshold": 1, "timeoutSeconds": 1},
            "terminationMessagePath": "/dev/termination-log",
            "terminationMessagePolicy": "File",
            "volumeMounts": [{"mountPath": TOKEN_MOUNT, "name": volume, "readOnly": true}]
        }),
    );
}

fn running(n: usize) -> Value {
    let ip = format!("10.0.{}.{}", (n / 250) % 250, n % 250 + 2);
    let cond = |t: &str| json!({"lastProbeTime": null, "lastTransitionTime": STAMP, "status": "True", "type": t});
    json!({
        "conditions": [cond("PodReadyToStartContainers"), cond("Initialized"), cond("Ready"),
                       cond("ContainersReady"), cond("PodScheduled")],
        "containerStatuses": [{
            "containerID": format!("containerd://{:064x}", n),
            "image": "registry.k8s.io/pause:3.10", "imageID": format!("registry.k8s.io/pause@sha256:{:064x}", 7),
            "lastState": {}, "name": "app", "ready": true, "restartCount": 0, "started": true,
            "state": {"running": {"startedAt": STAMP}}}],
        "hostIP": "10.0.0.1", "hostIPs": [{"ip": "10.0.0.1"}],
        "phase": "Running", "podIP": ip, "podIPs": [{"ip": ip}],
        "qosClass": "Burstable", "startTime": STAMP
    })
}

fn pending() -> Value {
    json!({
        "conditions": [{"lastProbeTime": null, "lastTransitionTime": STAMP,
            "message": "0/3 nodes are available: 3 Insufficient cpu. preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod.",
            "reason": "Unschedulable", "status": "False", "type": "PodScheduled"}],
        "phase": "Pending", "qosClass": "Burstable"
    })
}

/// Adds what the kubelet reports about a node: addresses, conditions, images, system info.
pub fn node(o: &mut Value, n: usize) {
    let name = o["metadata"]["name"].as_str().unwrap_or("node").to_string();
    let ip = format!("10.1.{}.{}", (n / 250) % 250, n % 250 + 2);
    merge(
        &mut o["metadata"],
        json!({"resourceVersion": (500_000 + n).to_string(), "uid": format!("7d1e0c4a-0000-4000-8000-{n:012x}"),
               "annotations": {"alpha.kubernetes.io/provided-node-ip": ip,
                               "karpenter.k8s.aws/ec2nodeclass-hash": "8741964316617530212",
                               "karpenter.k8s.aws/ec2nodeclass-hash-version": "v4",
                               "node.alpha.kubernetes.io/ttl": "0",
                               "volumes.kubernetes.io/controller-managed-attach-detach": "true"},
               "finalizers": ["karpenter.sh/termination"]}),
    );
    let cond = |t: &str, s: &str, r: &str| {
        json!({"lastHeartbeatTime": "2026-06-01T11:59:00Z", "lastTransitionTime": STAMP,
        "message": format!("kubelet {r}"), "reason": r, "status": s, "type": t})
    };
    let images: Vec<Value> = (0..12)
        .map(|k| json!({"names": [format!("registry.example.com/team-{k}/service@sha256:{:064x}", k * 7919 + 1),
                                   format!("registry.example.com/team-{k}/service:v1.{k}.0")],
                        "sizeBytes": 20_000_000 + k * 3_000_000}))
        .collect();
    let status = &mut o["status"];
    status["conditions"] = json!([
        cond("MemoryPressure", "False", "KubeletHasSufficientMemory"),
        cond("DiskPressure", "False", "KubeletHasNoDiskPressure"),
        cond("PIDPressure", "False", "KubeletHasSufficientPID"),
        cond("Ready", "True", "KubeletReady")
    ]);
    merge(
        status,
        json!({
            "addresses": [{"address": ip, "type": "InternalIP"}, {"address": name, "type": "Hostname"},
                          {"address": format!("ip-{}.us-west-2.compute.internal", ip.replace('.', "-")), "type": "InternalDNS"}],
            "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
            "images": images,
            "nodeInfo": {"architecture": "amd64", "bootID": format!("b0e1d2c3-0000-4000-8000-{n:012x}"),
                         "containerRuntimeVersion": "containerd://1.7.27", "kernelVersion": "6.1.134-152.225.amzn2023.x86_64",
                         "kubeProxyVersion": "", "kubeletVersion": "v1.36.3-eks-1234567",
                         "machineID": format!("ec2{n:029x}"), "operatingSystem": "linux",
                         "osImage": "Amazon Linux 2023.7.20250527", "systemUUID": format!("ec2{n:05x}-0000-4000-8000-000000000000")}
        }),
    );
}

/// Adds a NodeClaim's server fields and the status Karpenter writes.
pub fn claim(o: &mut Value, n: usize) {
    let pool = o["metadata"]["labels"]["karpenter.sh/nodepool"].clone();
    merge(
        &mut o["metadata"],
        json!({"resourceVersion": (700_000 + n).to_string(), "uid": format!("5a2b3c4d-0000-4000-8000-{n:012x}"),
               "generation": 1, "finalizers": ["karpenter.sh/termination"],
               "ownerReferences": [{"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "blockOwnerDeletion": true,
                                    "name": pool, "uid": "pool"}]}),
    );
    let status = &mut o["status"];
    status["imageID"] = json!("ami-0a1b2c3d4e5f67890");
    for c in status["conditions"].as_array_mut().into_iter().flatten() {
        c["observedGeneration"] = json!(1);
    }
}

/// Adds `extra`'s keys that `into` lacks (objects merged key by key).
fn merge(into: &mut Value, extra: Value) {
    let Value::Object(extra) = extra else { return };
    if !into.is_object() {
        *into = json!({});
    }
    for (k, v) in extra {
        match into.get_mut(&k) {
            Some(existing) if existing.is_object() && v.is_object() => merge(existing, v),
            Some(_) => {}
            None => {
                into[k.as_str()] = v;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dressed_pod_keeps_its_own_fields_and_gains_the_defaults() {
        let mut p = json!({"metadata": {"name": "p", "labels": {"app": "a"}},
            "spec": {"nodeName": "n1", "containers": [{"name": "app", "resources": {"requests": {"cpu": "1", "memory": "1Gi"}}}]}});
        pod(&mut p, 3);
        assert_eq!(p["spec"]["nodeName"], "n1");
        assert_eq!(p["metadata"]["labels"]["app"], "a");
        assert_eq!(p["spec"]["tolerations"].as_array().map(Vec::len), Some(2));
        assert_eq!(
            p["spec"]["containers"][0]["resources"]["requests"]["cpu"],
            "1"
        );
        assert_eq!(p["status"]["phase"], "Running");
        assert_eq!(p["status"]["podIP"], "10.0.0.5");
    }

    #[test]
    fn an_unbound_pod_is_pending_as_the_scheduler_left_it() {
        let mut p = json!({"metadata": {"name": "p"}, "spec": {"containers": []}});
        pod(&mut p, 0);
        assert_eq!(p["status"]["phase"], "Pending");
        assert_eq!(p["status"]["conditions"][0]["reason"], "Unschedulable");
    }

    #[test]
    fn a_dressed_node_keeps_its_ready_condition_and_labels() {
        let mut n = json!({"metadata": {"name": "node-1", "labels": {"a": "b"}},
                           "status": {"conditions": [{"type": "Ready", "status": "True"}]}});
        node(&mut n, 1);
        assert_eq!(n["metadata"]["labels"]["a"], "b");
        let ready = n["status"]["conditions"]
            .as_array()
            .and_then(|c| c.iter().find(|c| c["type"] == "Ready"));
        assert_eq!(ready.map(|c| c["status"].clone()), Some(json!("True")));
        assert_eq!(n["status"]["images"].as_array().map(Vec::len), Some(12));
    }

    #[test]
    fn fields_parse_names_both_and_nothing_else() {
        assert_eq!(Fields::parse("bare"), Some(Fields::Bare));
        assert_eq!(Fields::parse("dump"), Some(Fields::Dump));
        assert_eq!(Fields::parse("full"), None);
    }
}
