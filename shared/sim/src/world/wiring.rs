//! Building a [`World`]: the API server with Kerf's webhook as its admission webhook (called
//! through the webhook function's HTTP handler, secret path included), the functions'
//! contexts, and applying manifests with server-side apply, as `kubectl apply
//! --server-side` does.

use std::sync::{Arc, OnceLock};

use axum::http::header;
use kerf_control::ctx::{Ctx, Settings};
use kerf_control::handlers::events::FunctionUrlRequest;
use kerf_control::log::{Level, LogSink, Logger, MemorySink};
use kerf_control::ports::{Clock, ManualClock};
use kerf_kube::KubeCluster;
use kube::Client;
use kube::api::{Api, DynamicObject, GroupVersionKind, Patch, PatchParams};
use serde_json::Value;

use super::real::RealCluster;
use super::real::install::{Function, function_identity, install};
use super::real::webhook::WebhookServer;
use super::{
    InProcess, Kubelet, Scheduler, Server, SimCloud, SimCtx, SimPublisher, SimQueue, World,
    WorldError, WorldOptions,
};
use crate::admission::{Hook, HookFuture, Rule};
use crate::store::SimClock;
use crate::{Sim, SimOptions};

/// Namespace of Kerf's own objects in the simulated cluster.
pub const KERF_NAMESPACE: &str = "kerf";

/// The bearer token Kerf's functions send to the simulated API server.
pub const KERF_TOKEN: &str = "kerf-functions";

type Slot = Arc<OnceLock<(Arc<SimCtx>, SimQueue, SimQueue, String)>>;

/// A Function URL request (payload v2) carrying `review` to the webhook.
pub fn function_url_event(secret: &str, review: &Value) -> FunctionUrlRequest {
    http_event(&format!("/{secret}/admit"), "", &review.to_string())
}

/// The Function URL request (payload v2) of an HTTP POST to `path?query` with `body`.
pub fn http_event(path: &str, query: &str, body: &str) -> FunctionUrlRequest {
    let mut r = FunctionUrlRequest::default();
    r.version = Some("2.0".into());
    r.raw_path = Some(path.into());
    r.raw_query_string = Some(query.into());
    r.headers.insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static("application/json"),
    );
    r.request_context.http.method = Some("POST".into());
    r.request_context.http.path = Some(path.into());
    r.request_context.http.source_ip = Some("127.0.0.1".into());
    r.body = Some(body.into());
    r.is_base64_encoded = false;
    r
}

fn hook(name: &str, rules: Vec<Rule>, fail_open: bool, slot: Slot) -> Hook {
    Hook {
        name: name.into(),
        rules,
        fail_open,
        call: Arc::new(move |review: Value| -> HookFuture {
            let slot = slot.clone();
            Box::pin(async move {
                let (ctx, queue, timers, secret) = slot.get().ok_or("webhook not started")?;
                let event = function_url_event(secret, &review);
                let r = kerf_control::handlers::webhook::handle(ctx, queue, timers, secret, &event)
                    .await;
                if r.status == 200 {
                    Ok(r.body)
                } else {
                    Err(format!("HTTP {}: {}", r.status, r.body))
                }
            })
        }),
    }
}

fn ctx(
    client: &Client,
    cloud: &SimCloud,
    publisher: &SimPublisher,
    clock: &Arc<dyn Clock>,
    logs: &Arc<dyn LogSink>,
    options: &WorldOptions,
) -> SimCtx {
    let mut settings = Settings::new(&options.cluster_name, KERF_NAMESPACE);
    settings.optimize_cost = !options.karpenter_decisions;
    settings.karpenter_search = options.karpenter_decisions;
    settings.validate_emptiness = options.karpenter_decisions;
    settings.node_overlay = options.node_overlay;
    settings.node_repair = options.node_repair;
    settings.static_capacity = options.static_capacity;
    if options.serial {
        settings.concurrency = 1;
    }
    settings.ami_refresh = options
        .karpenter_decisions
        .then_some(jiff::SignedDuration::from_mins(5));
    Ctx {
        cluster: KubeCluster::new(client.clone(), KERF_NAMESPACE),
        cloud: cloud.clone(),
        publisher: publisher.clone(),
        clock: clock.clone(),
        log: Logger::new(logs.clone(), clock.clone(), Level::Info),
        metrics: Arc::default(),
        settings,
    }
}

/// The in-process API server with Kerf's webhook as its admission hooks, and the simulated
/// components reading its store; an admin client and the client Kerf's functions use.
async fn in_process(
    options: &WorldOptions,
    clock: &ManualClock,
    slot: Slot,
    cloud: &SimCloud,
) -> Result<(Server, Client, Client), WorldError> {
    let dyn_clock: Arc<dyn Clock> = Arc::new(clock.clone());
    let server_clock = clock.clone();
    let all = ["CREATE", "UPDATE"];
    let workloads = hook(
        "kerf-workloads.kerf.dev",
        vec![
            Rule::new("", "nodes", &all),
            Rule::new("", "nodes/status", &["UPDATE"]),
            Rule::new("", "pods/status", &["UPDATE"]),
            Rule::new("", "pods", &["DELETE"]),
        ],
        true,
        slot.clone(),
    );
    let crds = hook(
        "kerf-crds.kerf.dev",
        vec![
            Rule::new("karpenter.sh", "nodepools", &all),
            Rule::new("karpenter.sh", "nodeclaims", &all),
            Rule::new("karpenter.k8s.aws", "ec2nodeclasses", &all),
        ],
        false,
        slot,
    );
    let sim_opts = SimOptions {
        clock: SimClock(Arc::new(move || server_clock.now())),
        // A bound pod deleted or evicted stays Terminating until its kubelet stops it, as on
        // kube-apiserver.
        graceful_pod_deletion: true,
        // The world runs the disruption controller (world/pdb.rs).
        disruption_controller: true,
        ..SimOptions::default()
    };
    let sim = Sim::builder()
        .options(sim_opts)
        .port(options.port)
        .admission(workloads)
        .admission(crds)
        .start()
        .await?;
    let client = sim.client()?;
    // Kerf's functions call with their own credentials, so faults can be aimed at them alone.
    let kerf_client = sim.client_with_token(KERF_TOKEN)?;
    let mut kubelet = Kubelet::new(
        client.clone(),
        sim.cached(),
        cloud.clone(),
        dyn_clock.clone(),
    );
    kubelet.ready_delay = options.ready_delay;
    let scheduler = Scheduler::new(client.clone(), sim.cached(), dyn_clock);
    let server = Server::InProcess(Box::new(InProcess {
        sim,
        kubelet,
        scheduler,
    }));
    Ok((server, client, kerf_client))
}

/// The functions' contexts, in the order of [`Function`]'s variants.
type Contexts = [Arc<SimCtx>; 5];

const FUNCTIONS: [Function; 5] = [
    Function::Provisioner,
    Function::Webhook,
    Function::Termination,
    Function::Disruption,
    Function::Interruption,
];

pub(super) async fn start(mut options: WorldOptions) -> Result<World, WorldError> {
    let real = match &options.cluster {
        Some(path) => {
            options.start = jiff::Timestamp::now();
            options.skip_idle = false;
            Some(RealCluster::connect(path).await?)
        }
        None => None,
    };
    let clock = ManualClock::new(options.start);
    if real.is_some() {
        // Functions on a real control plane read the time as they do in Lambda.
        clock.follow_wall();
    }
    let dyn_clock: Arc<dyn Clock> = Arc::new(clock.clone());
    let slot: Slot = Arc::default();
    let cloud = SimCloud::new(&options.region, dyn_clock.clone(), options.boot_delay);
    let queue = SimQueue::new(dyn_clock.clone(), options.visibility);
    let termination_queue = SimQueue::new(dyn_clock.clone(), options.visibility);
    let interruption_queue = SimQueue::new(dyn_clock.clone(), options.visibility);
    let timer_queue = SimQueue::new(dyn_clock.clone(), options.visibility);
    let publisher = SimPublisher::default();
    let logs = Arc::new(MemorySink::default());
    let sink: Arc<dyn LogSink> = match &options.logs {
        Some(path) => Arc::new(super::logfile::Tee::create(path, logs.clone())?),
        None => logs.clone(),
    };
    let new_ctx =
        |client: &Client| Arc::new(ctx(client, &cloud, &publisher, &dyn_clock, &sink, &options));
    let (mut server, client, contexts): (Server, Client, Contexts) = match real {
        None => {
            let (server, client, kerf) = in_process(&options, &clock, slot.clone(), &cloud).await?;
            let contexts = FUNCTIONS.map(|_| new_ctx(&kerf));
            (server, client, contexts)
        }
        Some(cluster) => {
            install(&cluster.admin).await?;
            let mut contexts = Vec::with_capacity(FUNCTIONS.len());
            for f in FUNCTIONS {
                let id = function_identity(f)?;
                contexts.push(new_ctx(&cluster.client_as(&id.user, &id.groups)?));
            }
            let contexts: Contexts = contexts
                .try_into()
                .map_err(|_| WorldError::Cluster("a context per function".into()))?;
            let client = cluster.admin.clone();
            (Server::Real(Box::new(cluster)), client, contexts)
        }
    };
    let [provisioner, webhook, terminator, disruptor, interrupter] = contexts;
    // The slot was created empty just above, so this first set cannot fail.
    let _ = slot.set((
        webhook.clone(),
        queue.clone(),
        timer_queue.clone(),
        options.webhook_secret.clone(),
    ));
    if let Server::Real(cluster) = &mut server {
        let hooks = WebhookServer::start(
            webhook.clone(),
            queue.clone(),
            timer_queue.clone(),
            &options.webhook_secret,
        )
        .await?;
        hooks
            .register(&cluster.admin, &options.cluster_name)
            .await?;
        cluster.webhook = Some(hooks);
    }
    let next_sweep = options.start + options.sweep_every;
    let next_disruption = options.start + options.disruption_every + options.disruption_every / 2;
    Ok(World {
        server,
        client,
        clock,
        cloud,
        queue,
        termination_queue,
        interruption_queue,
        timer_queue,
        publisher,
        logs,
        provisioner,
        webhook,
        terminator,
        disruptor,
        interrupter,
        interruption: kerf_control::interrupt::InterruptOptions::default(),
        disruption: kerf_control::disrupt::SweepOptions::default(),
        options,
        next_sweep,
        next_disruption,
        invocation: 0,
        interruptions_handled: 0,
        timer_invocations: 0,
        provisioner_invocations: 0,
    })
}

/// The documents of a YAML or JSON manifest (`kind: List` expanded).
pub fn documents(manifest: &str) -> Result<Vec<Value>, WorldError> {
    let mut out = Vec::new();
    for doc in yaml_serde::Deserializer::from_str(manifest) {
        let v: Value = serde::Deserialize::deserialize(doc)
            .map_err(|e| WorldError::Manifest(e.to_string()))?;
        if v.is_null() {
            continue;
        }
        match v["items"].as_array() {
            Some(items) if v["kind"].as_str().is_some_and(|k| k.ends_with("List")) => {
                out.extend(items.iter().cloned())
            }
            _ => out.push(v),
        }
    }
    Ok(out)
}

/// The API of a kind, found through discovery; namespaced kinds in `namespace` (`default`
/// when none is given).
async fn dynamic_api(
    client: &Client,
    api_version: &str,
    kind: &str,
    namespace: Option<&str>,
) -> Result<Api<DynamicObject>, WorldError> {
    let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
    let gvk = GroupVersionKind::gvk(group, version, kind);
    let (ar, caps) = kube::discovery::pinned_kind(client, &gvk).await?;
    Ok(if caps.scope == kube::discovery::Scope::Namespaced {
        Api::namespaced_with(client.clone(), namespace.unwrap_or("default"), &ar)
    } else {
        Api::all_with(client.clone(), &ar)
    })
}

pub(crate) async fn apply(client: &Client, manifest: &str) -> Result<Vec<String>, WorldError> {
    let mut applied = Vec::new();
    for doc in documents(manifest)? {
        let api_version = doc["apiVersion"].as_str().unwrap_or_default();
        let kind = doc["kind"].as_str().unwrap_or_default();
        let name = doc["metadata"]["name"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        if kind.is_empty() || name.is_empty() {
            return Err(WorldError::Manifest(format!(
                "document without kind or name: {doc}"
            )));
        }
        let ns = doc["metadata"]["namespace"].as_str();
        let api = dynamic_api(client, api_version, kind, ns).await?;
        let pp = PatchParams::apply("kubectl").force();
        let object = format!("{kind}/{name}");
        match api.patch(&name, &pp, &Patch::Apply(&doc)).await {
            Err(kube::Error::Api(s)) => {
                return Err(WorldError::Rejected {
                    object,
                    message: s.message,
                });
            }
            r => r?,
        };
        applied.push(object);
    }
    Ok(applied)
}

/// The apiVersion of a kind a scenario may name without one.
fn known_api_version(kind: &str) -> Option<&'static str> {
    Some(match kind {
        "Pod" | "Service" | "ConfigMap" | "Namespace" | "Node" | "Secret" => "v1",
        "PersistentVolumeClaim" | "PersistentVolume" => "v1",
        "StorageClass" | "CSINode" | "VolumeAttachment" => "storage.k8s.io/v1",
        "Deployment" | "DaemonSet" | "StatefulSet" | "ReplicaSet" => "apps/v1",
        "PodDisruptionBudget" => "policy/v1",
        "NodePool" | "NodeClaim" => "karpenter.sh/v1",
        "EC2NodeClass" => "karpenter.k8s.aws/v1",
        _ => return None,
    })
}

pub(crate) async fn delete(
    client: &Client,
    api_version: Option<&str>,
    kind: &str,
    namespace: Option<&str>,
    name: &str,
) -> Result<(), WorldError> {
    let api_version = api_version
        .or_else(|| known_api_version(kind))
        .ok_or_else(|| {
            WorldError::Manifest(format!(
                "give the apiVersion of kind {kind} to delete {name}"
            ))
        })?;
    let api = dynamic_api(client, api_version, kind, namespace).await?;
    api.delete(name, &kube::api::DeleteParams::default())
        .await?;
    Ok(())
}
