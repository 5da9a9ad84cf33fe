//! A simulated kubelet for every running instance: it registers its Node through the API
//! server (so admission webhooks see the CREATE, as with a real kubelet), with the
//! instance type's labels and resources, the labels and taints of the launch and
//! `karpenter.sh/unregistered:NoExecute`; turns Ready after a delay; lets a DaemonSet agent
//! remove the startup taints a while later; runs the pods bound to it and stops those being
//! deleted (the deletion is confirmed at its next step), a pod with volumes only once they
//! are attached (the EBS CSI node side, [`super::storage::attach`]); reports NotReady
//! once its instance is gone. Pods bound to a Node that no longer exists are deleted (the
//! pod garbage collector's job).

use std::collections::BTreeMap;
use std::sync::Arc;

use jiff::{SignedDuration, Timestamp};
use k8s_openapi::api::core::v1::{Node, NodeCondition, Pod, Taint};
use kerf_api::v1::NodeClaim;
use kerf_control::ports::Clock;
use kube::Client;
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use serde_json::{Value, json};

use super::cloud::{SimCloud, SimInstance};
use super::storage::{self, Volumes, attach};
use crate::cached::Cached;

/// What a kubelet step did.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct KubeletReport {
    pub registered: Vec<String>,
    pub ready: Vec<String>,
    pub pods_started: usize,
    pub volumes: attach::AttachReport,
}

/// The kubelets of all instances.
#[derive(Clone)]
pub struct Kubelet {
    client: Client,
    reads: Cached,
    cloud: SimCloud,
    clock: Arc<dyn Clock>,
    /// From instance running to Node Ready.
    pub ready_delay: SignedDuration,
    /// From Node Ready to its startup taints removed.
    pub startup_taint_delay: SignedDuration,
    /// A paused kubelet does nothing (instances that never register).
    pub paused: bool,
}

impl std::fmt::Debug for Kubelet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Kubelet")
            .field("ready_delay", &self.ready_delay)
            .finish_non_exhaustive()
    }
}

/// The Node's condition `type_`.
fn condition<'a>(n: &'a Node, type_: &str) -> Option<&'a NodeCondition> {
    n.status
        .as_ref()?
        .conditions
        .as_ref()?
        .iter()
        .find(|c| c.type_ == type_)
}

fn ready(n: &Node) -> Option<(bool, Timestamp)> {
    let c = condition(n, "Ready")?;
    Some((
        c.status == "True",
        c.last_transition_time
            .as_ref()
            .map(|t| t.0)
            .unwrap_or_default(),
    ))
}

/// Sets one Node condition, the others kept (a strategic merge by condition type).
async fn set_condition(
    api: &Api<Node>,
    name: &str,
    (type_, status, reason): (&str, &str, &str),
    now: Timestamp,
) -> Result<(), kube::Error> {
    let t = crate::world::rfc3339(now);
    let patch = json!({"status": {"conditions": [{"type": type_, "status": status,
        "reason": reason, "lastTransitionTime": t, "lastHeartbeatTime": t}]}});
    api.patch_status(name, &PatchParams::default(), &Patch::Strategic(&patch))
        .await?;
    Ok(())
}

fn pid(n: &Node) -> &str {
    n.spec
        .as_ref()
        .and_then(|s| s.provider_id.as_deref())
        .unwrap_or_default()
}

/// The Node's taints without its claim's startup taints, and whether any were there.
fn without_startup_taints(n: &Node, claim: &NodeClaim) -> (Vec<Taint>, bool) {
    let taints = n
        .spec
        .as_ref()
        .and_then(|s| s.taints.clone())
        .unwrap_or_default();
    let before = taints.len();
    let kept: Vec<Taint> = taints
        .into_iter()
        .filter(|t| !claim.spec.startup_taints.iter().any(|s| s.key == t.key))
        .collect();
    let removed = kept.len() != before;
    (kept, removed)
}

/// The name the kubelet of instance `i` registers its Node under: its private DNS name.
pub fn node_name(i: &SimInstance) -> String {
    dns_name(&i.info.id, &i.info.zone)
}

/// The private DNS name of instance `id` in `zone` (`ip-10-0-X-Y.<region>.compute.internal`).
pub fn dns_name(id: &str, zone: &str) -> String {
    let n = u64::from_str_radix(id.trim_start_matches("i-"), 16).unwrap_or_default() & 0xffff;
    let region = zone.trim_end_matches(|c: char| c.is_ascii_alphabetic());
    format!("ip-10-0-{}-{}.{region}.compute.internal", n / 256, n % 256)
}

impl Kubelet {
    /// Kubelets writing through `client` and reading the store through `reads`.
    pub fn new(client: Client, reads: Cached, cloud: SimCloud, clock: Arc<dyn Clock>) -> Self {
        Kubelet {
            client,
            reads,
            cloud,
            clock,
            ready_delay: SignedDuration::from_secs(20),
            startup_taint_delay: SignedDuration::from_secs(5),
            paused: false,
        }
    }

    /// When a kubelet next acts by itself: a running instance's Node turning Ready, or a Ready
    /// Node's startup taints coming off. `None` when every Node is settled.
    pub fn next_due(&self) -> Result<Option<Timestamp>, kube::Error> {
        if self.paused {
            return Ok(None);
        }
        let now = self.clock.now();
        let nodes = self.reads.list::<Node>("/nodes")?;
        let claims = self.reads.list::<NodeClaim>("karpenter.sh/nodeclaims")?;
        let startup: std::collections::HashMap<&str, &NodeClaim> = claims
            .iter()
            .filter(|c| !c.spec.startup_taints.is_empty())
            .filter_map(|c| Some((c.status.as_ref()?.provider_id.as_deref()?, c)))
            .collect();
        let instances = self.cloud.instances();
        let by_pid: std::collections::HashMap<&str, &SimInstance> = instances
            .iter()
            .filter(|i| i.info.state == "running")
            .map(|i| (i.info.provider_id.as_str(), i))
            .collect();
        let mut due: Option<Timestamp> = None;
        for n in nodes.iter() {
            let Some(i) = by_pid.get(pid(n)) else {
                continue;
            };
            let at = match ready(n) {
                Some((false, _)) => Some(i.running_at + self.ready_delay),
                Some((true, since)) => startup
                    .get(pid(n))
                    .filter(|c| without_startup_taints(n, c).1)
                    .map(|_| since + self.startup_taint_delay),
                None => None,
            };
            if let Some(at) = at.filter(|t| *t > now) {
                due = Some(due.map_or(at, |d| d.min(at)));
            }
        }
        if let Some(at) = attach::next_due(&Volumes::read(&self.reads)?, now) {
            due = Some(due.map_or(at, |d| d.min(at)));
        }
        Ok(due)
    }

    /// One round of every kubelet.
    pub async fn step(&self) -> Result<KubeletReport, kube::Error> {
        let now = self.clock.now();
        let mut out = KubeletReport::default();
        if self.paused {
            return Ok(out);
        }
        let nodes_api: Api<Node> = Api::all(self.client.clone());
        let nodes = self.reads.list::<Node>("/nodes")?;
        let instances = self.cloud.instances();
        let registered: std::collections::HashSet<&str> = nodes.iter().map(pid).collect();
        for i in instances.iter().filter(|i| i.info.state == "running") {
            if !registered.contains(i.info.provider_id.as_str()) {
                let n = nodes_api
                    .create(&PostParams::default(), &node_for(i, now))
                    .await?;
                out.registered.push(n.metadata.name.unwrap_or_default());
            }
        }
        let claims = self.reads.list::<NodeClaim>("karpenter.sh/nodeclaims")?;
        let claims: std::collections::HashMap<&str, &NodeClaim> = claims
            .iter()
            .filter_map(|c| Some((c.status.as_ref()?.provider_id.as_deref()?, c)))
            .collect();
        let by_pid: std::collections::HashMap<&str, &SimInstance> = instances
            .iter()
            .map(|i| (i.info.provider_id.as_str(), i))
            .collect();
        for n in nodes.iter() {
            let name = n.metadata.name.clone().unwrap_or_default();
            let inst = by_pid.get(pid(n)).copied();
            let alive = inst.is_some_and(|i| i.info.state == "running");
            if let Some(f) = inst.and_then(|i| i.fault.as_ref()).filter(|_| alive) {
                if condition(n, &f.condition).map(|c| c.status.as_str()) != Some(f.status.as_str())
                {
                    let fault = (f.condition.as_str(), f.status.as_str(), "SimulatedFault");
                    set_condition(&nodes_api, &name, fault, now).await?;
                }
                if f.condition == "Ready" {
                    continue;
                }
            }
            match (ready(n), inst) {
                (Some((false, _)), Some(i)) if alive && now >= i.running_at + self.ready_delay => {
                    set_ready(&nodes_api, &name, "True", now).await?;
                    out.ready.push(name.clone());
                }
                (Some((true, since)), _) if alive && now >= since + self.startup_taint_delay => {
                    self.remove_startup_taints(&nodes_api, n, &claims).await?;
                }
                (Some((true, _)), _) if !alive => {
                    set_ready(&nodes_api, &name, "Unknown", now).await?
                }
                _ => {}
            }
        }
        let vols = Volumes::read(&self.reads)?;
        let pods = self.reads.list::<Pod>("/pods")?;
        out.volumes = Box::pin(attach::step(&self.client, &vols, &pods, &nodes, now)).await?;
        out.pods_started = self.run_pods(&nodes, &instances, now).await?;
        Ok(out)
    }

    async fn remove_startup_taints(
        &self,
        api: &Api<Node>,
        n: &Node,
        claims: &std::collections::HashMap<&str, &NodeClaim>,
    ) -> Result<(), kube::Error> {
        let Some(claim) = claims.get(pid(n)) else {
            return Ok(());
        };
        let (kept, removed) = without_startup_taints(n, claim);
        if removed {
            let name = n.metadata.name.clone().unwrap_or_default();
            let mut node = api.get(&name).await?;
            if let Some(spec) = node.spec.as_mut() {
                spec.taints = Some(kept);
            }
            api.replace(&name, &PostParams::default(), &node).await?;
        }
        Ok(())
    }

    /// Starts pods bound to Ready nodes; deletes pods bound to Nodes that are gone; confirms
    /// the deletion of Terminating pods (their containers stop at once).
    async fn run_pods(
        &self,
        nodes: &[Node],
        instances: &[SimInstance],
        now: Timestamp,
    ) -> Result<usize, kube::Error> {
        let pods = self.reads.list::<Pod>("/pods")?;
        let vols = Volumes::read(&self.reads)?;
        let by_name: std::collections::HashMap<&str, &Node> = nodes
            .iter()
            .filter_map(|n| Some((n.metadata.name.as_deref()?, n)))
            .collect();
        let up: std::collections::HashSet<&str> = instances
            .iter()
            .filter(|i| i.info.state == "running")
            .map(|i| i.info.provider_id.as_str())
            .collect();
        let mut started = 0;
        for p in pods.iter() {
            let Some(node) = p.spec.as_ref().and_then(|s| s.node_name.as_deref()) else {
                continue;
            };
            let ns = p.metadata.namespace.clone().unwrap_or_default();
            let name = p.metadata.name.clone().unwrap_or_default();
            let api: Api<Pod> = Api::namespaced(self.client.clone(), &ns);
            if p.metadata.deletion_timestamp.is_some() {
                // Its containers stopped: the kubelet confirms the deletion.
                let _ = api
                    .delete(&name, &DeleteParams::default().grace_period(0))
                    .await;
                continue;
            }
            let Some(n) = by_name.get(node).copied() else {
                if p.metadata.deletion_timestamp.is_none() {
                    let _ = api.delete(&name, &DeleteParams::default()).await;
                }
                continue;
            };
            let running = up.contains(pid(n));
            let phase = p
                .status
                .as_ref()
                .and_then(|s| s.phase.as_deref())
                .unwrap_or("Pending");
            let volumes_ready =
                storage::pod_claims(p).is_empty() || attach::ready_to_start(&vols, p, node);
            if running && ready(n).is_some_and(|(r, _)| r) && phase == "Pending" && volumes_ready {
                let t = crate::world::rfc3339(now);
                let mut conds: Vec<Value> = p
                    .status
                    .as_ref()
                    .and_then(|s| s.conditions.as_ref())
                    .map(|cs| {
                        cs.iter()
                            .filter_map(|c| serde_json::to_value(c).ok())
                            .filter(|c| c["type"] != "Ready")
                            .collect()
                    })
                    .unwrap_or_default();
                conds.push(json!({"type": "Ready", "status": "True", "lastTransitionTime": t}));
                let containers: Vec<Value> = p
                    .spec
                    .iter()
                    .flat_map(|s| &s.containers)
                    .map(|c| {
                        json!({"name": c.name, "image": c.image, "ready": true,
                        "started": true, "restartCount": 0,
                        "state": {"running": {"startedAt": t}}})
                    })
                    .collect();
                let pod_ip = pod_ip(p.metadata.uid.as_deref().unwrap_or(&name));
                let host_ip = internal_ip(n);
                let patch = json!({"status": {"phase": "Running", "startTime": t,
                    "conditions": conds, "containerStatuses": containers,
                    "podIP": pod_ip, "podIPs": [{"ip": pod_ip}],
                    "hostIP": host_ip, "hostIPs": [{"ip": host_ip}]}});
                api.patch_status(&name, &PatchParams::default(), &Patch::Merge(&patch))
                    .await?;
                started += 1;
            }
        }
        Ok(started)
    }
}

/// The address the VPC CNI would give a pod: one of 10.64.0.0/10, from its UID (the same
/// pod always gets the same address).
fn pod_ip(uid: &str) -> String {
    let h = uid.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    });
    format!(
        "10.{}.{}.{}",
        64 + (h >> 16) % 64,
        (h >> 8) % 256,
        h % 254 + 1
    )
}

/// A Node's `InternalIP`.
fn internal_ip(n: &Node) -> String {
    n.status
        .iter()
        .flat_map(|s| s.addresses.iter().flatten())
        .find(|a| a.type_ == "InternalIP")
        .map(|a| a.address.clone())
        .unwrap_or_default()
}

async fn set_ready(
    api: &Api<Node>,
    name: &str,
    status: &str,
    now: Timestamp,
) -> Result<(), kube::Error> {
    let reason = match status {
        "True" => "KubeletReady",
        "Unknown" => "NodeStatusUnknown",
        _ => "KubeletNotReady",
    };
    set_condition(api, name, ("Ready", status, reason), now).await
}

/// The Node a kubelet registers for instance `i`.
pub fn node_for(i: &SimInstance, now: Timestamp) -> Node {
    let name = node_name(i);
    let mut labels: BTreeMap<String, String> = i.type_labels.clone();
    labels.extend(i.labels.clone());
    let region = i
        .info
        .zone
        .trim_end_matches(|c: char| c.is_ascii_alphabetic())
        .to_string();
    labels.insert(kerf_labels::HOSTNAME.into(), name.clone());
    labels.insert(kerf_labels::ZONE.into(), i.info.zone.clone());
    labels.insert(kerf_labels::REGION.into(), region);
    labels.insert(
        kerf_labels::INSTANCE_TYPE.into(),
        i.info.instance_type.clone(),
    );
    labels.insert(
        kerf_labels::CAPACITY_TYPE.into(),
        i.info.capacity_type.as_str().into(),
    );
    let mut taints: Vec<Value> = i
        .taints
        .iter()
        .map(|t| json!({"key": t.key, "value": t.value, "effect": t.effect}))
        .collect();
    taints.push(json!({"key": kerf_labels::UNREGISTERED_TAINT, "effect": "NoExecute"}));
    let t = crate::world::rfc3339(now);
    let ip = name
        .trim_start_matches("ip-")
        .split('.')
        .next()
        .unwrap_or_default()
        .replace('-', ".");
    let arch = labels.get(kerf_labels::ARCH).cloned().unwrap_or_default();
    let v = json!({"apiVersion": "v1", "kind": "Node",
        "metadata": {"name": name, "labels": labels},
        "spec": {"providerID": i.info.provider_id, "taints": taints},
        "status": {"capacity": i.capacity, "allocatable": i.allocatable,
            "addresses": [{"type": "InternalIP", "address": ip},
                {"type": "Hostname", "address": name}],
            "nodeInfo": {"kubeletVersion": "v1.33.0-eks-kerf-sim", "osImage": "Amazon Linux 2023",
                "kernelVersion": "6.1.0", "containerRuntimeVersion": "containerd://1.7.27",
                "operatingSystem": "linux", "architecture": arch, "kubeProxyVersion": "",
                "machineID": i.info.id, "systemUUID": i.info.id, "bootID": i.info.id},
            "conditions": [{"type": "Ready", "status": "False", "reason": "KubeletNotReady",
                "lastTransitionTime": t, "lastHeartbeatTime": t}]}});
    serde_json::from_value(v).unwrap_or_default()
}
