//! A whole simulated cluster in one process: the in-process API server with Kerf's webhook
//! registered as its admission webhook, a simulated EC2, kubelets, kube-scheduler, a
//! Deployment controller, the provisioning queue and the event bus, all on one simulated
//! clock — and Kerf's real handlers (the code the Lambda functions run) driving it.
//!
//! [`World::tick`] advances time by one step: workloads reconcile, the scheduler binds or
//! marks pods unschedulable (which queues provisioning hints through the webhook), queued
//! hints are delivered to the provisioner after the batching window, kubelets register and
//! become Ready, and every minute the scheduled sweep runs. An hour of cluster life runs in
//! well under a second of wall time.

pub mod cloud;
pub mod crash;
mod deliver;
pub mod import;
pub mod kubelet;
pub mod logfile;
pub mod pdb;
pub mod prices;
pub mod queue;
pub mod real;
pub mod scheduler;
pub mod server;
pub mod storage;
mod time;
pub(crate) mod wiring;
pub use server::{InProcess, Server};
pub use wiring::{KERF_NAMESPACE, KERF_TOKEN, function_url_event, http_event};
pub mod workloads;

use std::sync::Arc;

use jiff::{SignedDuration, Timestamp};
use kerf_control::ctx::Ctx;
use kerf_control::log::MemorySink;
use kerf_control::ports::{Clock, ManualClock};
use kerf_kube::KubeCluster;
use kube::Client;
use serde_json::Value;

pub use cloud::SimCloud;
pub use kubelet::Kubelet;
pub use queue::{SimPublisher, SimQueue};
pub use scheduler::Scheduler;

use crate::SimError;

/// The context the simulated functions run with.
pub type SimCtx = Ctx<KubeCluster, SimCloud, SimPublisher>;

/// RFC 3339 with second precision.
pub fn rfc3339(t: Timestamp) -> String {
    t.strftime("%Y-%m-%dT%H:%M:%SZ").to_string()
}

/// How the world behaves.
#[derive(Debug, Clone)]
pub struct WorldOptions {
    pub cluster_name: String,
    pub region: String,
    pub start: Timestamp,
    /// Simulated time per [`World::tick`].
    pub tick: SignedDuration,
    /// From launch to instance running.
    pub boot_delay: SignedDuration,
    /// From instance running to Node Ready.
    pub ready_delay: SignedDuration,
    /// How long the first queued hint waits before a batch is delivered.
    pub batch_window: SignedDuration,
    /// Period of the scheduled sweep.
    pub sweep_every: SignedDuration,
    /// Period of the disruption function (it runs half a period after the sweep).
    pub disruption_every: SignedDuration,
    /// Queue visibility timeout (a failed message's redelivery delay).
    pub visibility: SignedDuration,
    /// Secret path segment of the webhook URL.
    pub webhook_secret: String,
    /// [`World::run_for`] and [`World::run_until`] jump over quiet time: after a tick that
    /// changed nothing, the clock moves straight to the next moment something is due
    /// ([`World::next_due`]) instead of ticking through every step in between.
    pub skip_idle: bool,
    /// [`World::tick`] delivers the termination queue; off when the caller runs its own
    /// consumer (concurrent invocations in wall-clock time, as the event source mapping).
    pub deliver_termination: bool,
    /// Kerf's functions decide as Karpenter does: first-fit packing and Karpenter's
    /// consolidation search (`kerf sim --compare karpenter`).
    pub karpenter_decisions: bool,
    /// Karpenter's `NodeOverlay` gate for Kerf's functions: the cluster's NodeOverlays change
    /// each pool's instance types.
    pub node_overlay: bool,
    /// Karpenter's `NodeRepair` gate for Kerf's functions.
    pub node_repair: bool,
    /// Karpenter's `StaticCapacity` gate: static NodePools keep `replicas` NodeClaims.
    pub static_capacity: bool,
    /// Kerf's functions make their API and EC2 calls one at a time, so the order of writes
    /// (and the names the server generates from it) is the same on every run: `kerf sim`
    /// runs are reproducible. Off in tests that exercise concurrent calls.
    pub serial: bool,
    /// Every SQS batch is handled twice, the second time in reverse order (at-least-once
    /// delivery, out of order).
    pub duplicate_deliveries: bool,
    /// The API server's port on 127.0.0.1 (0: any free port).
    pub port: u16,
    /// A real control plane to run on instead of the in-process server: its kubeconfig
    /// ([`real`]). Time is then the wall clock and `start` and `skip_idle` do not apply.
    pub cluster: Option<std::path::PathBuf>,
    /// Also append the functions' JSON log lines to this file as they are written.
    pub logs: Option<std::path::PathBuf>,
}

impl Default for WorldOptions {
    fn default() -> Self {
        WorldOptions {
            cluster_name: "kerf-sim".into(),
            region: "us-west-2".into(),
            start: Timestamp::constant(1_798_761_600, 0),
            tick: SignedDuration::from_secs(1),
            boot_delay: SignedDuration::from_secs(30),
            ready_delay: SignedDuration::from_secs(20),
            batch_window: SignedDuration::from_secs(1),
            sweep_every: SignedDuration::from_mins(1),
            disruption_every: SignedDuration::from_mins(1),
            visibility: SignedDuration::from_secs(30),
            webhook_secret: "sim-webhook-secret".into(),
            skip_idle: false,
            deliver_termination: true,
            karpenter_decisions: false,
            node_overlay: false,
            node_repair: false,
            static_capacity: false,
            serial: false,
            duplicate_deliveries: false,
            port: 0,
            cluster: None,
            logs: None,
        }
    }
}

/// Failures driving the world.
#[derive(Debug, thiserror::Error)]
pub enum WorldError {
    #[error("sim: {0}")]
    Sim(#[from] SimError),
    #[error("kubernetes API: {0}")]
    Kube(#[from] kube::Error),
    #[error("manifest: {0}")]
    Manifest(String),
    /// The API server refused an object (`Kind/name`) with this message.
    #[error("{object}: {message}")]
    Rejected { object: String, message: String },
    /// The real control plane: unreachable, or refusing Kerf's installation.
    #[error("cluster: {0}")]
    Cluster(String),
    /// `--logs FILE` cannot be written.
    #[error("cannot write the log file {path}: {message}")]
    LogFile { path: String, message: String },
    /// Asked of a world on a real control plane.
    #[error("{0} exists only with the in-process API server")]
    InProcessOnly(&'static str),
    /// A change the simulated cloud cannot make (an unknown reservation, ...).
    #[error("cloud: {0}")]
    Cloud(String),
}

/// What one tick did.
#[derive(Debug, Default, Clone)]
pub struct TickReport {
    pub scheduler: scheduler::ScheduleReport,
    pub kubelet: kubelet::KubeletReport,
    pub workloads: workloads::WorkloadReport,
    /// Provisioner responses this tick (SQS batches and sweeps).
    pub invocations: Vec<Value>,
}

/// The simulated cluster and Kerf running against it.
pub struct World {
    /// The API server and the cluster components beside it.
    pub server: Server,
    /// A client as the cluster's administrator.
    pub client: Client,
    pub clock: ManualClock,
    pub cloud: SimCloud,
    /// The provisioning queue.
    pub queue: SimQueue,
    /// The termination work queue.
    pub termination_queue: SimQueue,
    /// The interruption queue (what EventBridge delivers from EC2).
    pub interruption_queue: SimQueue,
    /// The disruption function's timer queue.
    pub timer_queue: SimQueue,
    pub publisher: SimPublisher,
    pub logs: Arc<MemorySink>,
    /// The provisioner function's context.
    pub provisioner: Arc<SimCtx>,
    /// The webhook function's context.
    pub webhook: Arc<SimCtx>,
    /// The termination function's context.
    pub terminator: Arc<SimCtx>,
    /// The disruption function's context.
    pub disruptor: Arc<SimCtx>,
    /// The interruption function's context.
    pub interrupter: Arc<SimCtx>,
    /// The interruption function's options (feature gates).
    pub interruption: kerf_control::interrupt::InterruptOptions,
    /// The disruption function's options (feature gates).
    pub disruption: kerf_control::disrupt::SweepOptions,
    pub options: WorldOptions,
    next_sweep: Timestamp,
    next_disruption: Timestamp,
    invocation: u64,
    /// Interruption messages the interruption function handled (not failed).
    pub interruptions_handled: usize,
    /// Invocations of the disruption function by its timer queue.
    pub timer_invocations: usize,
    /// Invocations of the provisioner function by its queue.
    pub provisioner_invocations: usize,
}

impl std::fmt::Debug for World {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("World")
            .field("now", &self.clock.now())
            .finish_non_exhaustive()
    }
}

impl World {
    /// Starts the API server (with Kerf's webhook) and every simulated component.
    pub async fn start(options: WorldOptions) -> Result<World, WorldError> {
        wiring::start(options).await
    }

    /// The simulated time.
    pub fn now(&self) -> Timestamp {
        self.clock.now()
    }

    /// Creates or replaces the objects of a YAML or JSON manifest (several documents).
    pub async fn apply(&self, manifest: &str) -> Result<Vec<String>, WorldError> {
        wiring::apply(&self.client, manifest).await
    }

    /// Deletes one object (`api_version` may be omitted for core, apps, policy and Karpenter
    /// kinds), as `kubectl delete` does.
    pub async fn delete(
        &self,
        api_version: Option<&str>,
        kind: &str,
        namespace: Option<&str>,
        name: &str,
    ) -> Result<(), WorldError> {
        wiring::delete(&self.client, api_version, kind, namespace, name).await
    }

    /// Sets a Deployment's replicas through its scale subresource, as `kubectl scale` does.
    pub async fn scale(
        &self,
        namespace: &str,
        name: &str,
        replicas: u32,
    ) -> Result<(), WorldError> {
        use k8s_openapi::api::apps::v1::Deployment;
        let api: kube::Api<Deployment> = kube::Api::namespaced(self.client.clone(), namespace);
        let patch = serde_json::json!({"spec": {"replicas": replicas}});
        let pp = kube::api::PatchParams::default();
        api.patch_scale(name, &pp, &kube::api::Patch::Merge(&patch))
            .await?;
        Ok(())
    }

    /// Advances time by one tick and lets every component act once. On a real control plane
    /// a tick first waits for the wall clock to reach it.
    pub async fn tick(&mut self) -> Result<TickReport, WorldError> {
        self.advance_clock().await;
        let mut r = TickReport::default();
        if let Server::InProcess(p) = &self.server {
            r.workloads = Box::pin(workloads::step(&self.client, &p.sim.cached())).await?;
            Box::pin(storage::step(
                &self.client,
                &p.sim.cached(),
                &self.options.region,
            ))
            .await?;
            r.scheduler = Box::pin(p.scheduler.step()).await?;
        }
        if let Some(oldest) = self.queue.oldest_visible()
            && self.now() >= oldest + self.options.batch_window
        {
            r.invocations.push(self.deliver().await);
        }
        if self.interruption_queue.oldest_visible().is_some() {
            r.invocations.push(self.deliver_interruption().await);
        }
        if self.timer_queue.oldest_visible().is_some() {
            r.invocations.push(self.deliver_timers().await);
        }
        if self.options.deliver_termination && self.termination_queue.oldest_visible().is_some() {
            r.invocations.push(self.deliver_termination().await);
            // The ReplicaSet controller replaces evicted pods within moments, not a tick later.
            if let Server::InProcess(p) = &self.server {
                let again = Box::pin(workloads::step(&self.client, &p.sim.cached())).await?;
                r.workloads.created += again.created;
                r.workloads.deleted += again.deleted;
            }
        }
        r.kubelet = match &mut self.server {
            Server::InProcess(p) => {
                let k = Box::pin(p.kubelet.step()).await?;
                pdb::step(&self.client, &p.sim.cached(), self.clock.now()).await?;
                k
            }
            Server::Real(c) => {
                let now = self.clock.now();
                c.kubelets(&self.cloud, now, self.options.ready_delay)
                    .await?
            }
        };
        if self.now() >= self.next_sweep {
            self.next_sweep = self.now() + self.options.sweep_every;
            r.invocations.push(self.sweep().await);
        }
        if self.now() >= self.next_disruption {
            self.next_disruption = self.now() + self.options.disruption_every;
            r.invocations.push(self.disrupt().await);
        }
        Ok(r)
    }

    /// Flaky dependencies for Kerf's functions: `api` of their API-server requests fail (409,
    /// 500 or timeout) and `cloud` of their EC2 calls (throttled or 5xx), at random from
    /// `seed`. The simulated kubelets, scheduler and controllers are left alone.
    pub fn set_flaky(&self, api: f64, cloud: f64, seed: u64) -> Result<(), WorldError> {
        self.sim()?.set_flaky(KERF_TOKEN, api, seed);
        self.cloud.set_flaky(cloud, seed.wrapping_add(1));
        Ok(())
    }

    pub(crate) fn holder(&mut self) -> String {
        self.invocation += 1;
        format!("provisioner-{}", self.invocation)
    }

    /// A provisioner context whose Cluster and Cloud calls go through `switch` (crash
    /// injection), sharing everything else with the world's provisioner.
    pub fn crashing(
        &self,
        switch: &crash::CrashSwitch,
    ) -> Ctx<crash::CrashCluster<KubeCluster>, crash::CrashCloud<SimCloud>, SimPublisher> {
        let p = &self.provisioner;
        Ctx {
            cluster: crash::CrashCluster {
                inner: p.cluster.clone(),
                switch: switch.clone(),
            },
            cloud: crash::CrashCloud {
                inner: p.cloud.clone(),
                switch: switch.clone(),
            },
            publisher: p.publisher.clone(),
            clock: p.clock.clone(),
            log: p.log.clone(),
            metrics: Arc::default(),
            settings: p.settings.clone(),
        }
    }
}
