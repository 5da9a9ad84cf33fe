//! Kerf's functions on the real control plane, in wall-clock time: each function's context
//! (built like the simulated world's, `shared/sim/src/world/wiring.rs`) over a client of its
//! own Kubernetes identity, the simulated EC2 and the system clock; the provisioner's
//! scheduled event, and the termination function driven over a simulated SQS queue as its
//! event source mapping would.

use std::sync::Arc;

use jiff::SignedDuration;
use kerf_control::ctx::{Ctx, Settings};
use kerf_control::handlers::events::{Invocation, to_json};
use kerf_control::handlers::{provisioner, termination};
use kerf_control::log::{Level, Logger, MemorySink};
use kerf_control::ports::{Clock, SystemClock};
use kerf_kube::KubeCluster;
use kerf_sim::world::{SimCloud, SimCtx, SimPublisher, SimQueue, rfc3339};
use kube::Client;
use serde_json::{Value, json};

/// Namespace of Kerf's own objects (infra/rbac/00-namespace.yaml).
pub const KERF_NAMESPACE: &str = "kerf";

/// The AWS region of the simulated EC2.
pub const REGION: &str = "us-west-2";

/// What every function shares: EC2, the clock, the event bus, the log lines.
#[derive(Clone)]
pub struct Shared {
    pub cloud: SimCloud,
    pub clock: Arc<dyn Clock>,
    pub publisher: SimPublisher,
    pub logs: Arc<MemorySink>,
}

impl std::fmt::Debug for Shared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Shared").finish_non_exhaustive()
    }
}

impl Shared {
    /// A simulated EC2 on the system clock whose instances boot in `boot_delay`.
    pub fn new(boot_delay: SignedDuration) -> Shared {
        let clock: Arc<dyn Clock> = Arc::new(SystemClock);
        Shared {
            cloud: SimCloud::new(REGION, clock.clone(), boot_delay),
            clock,
            publisher: SimPublisher::default(),
            logs: Arc::new(MemorySink::default()),
        }
    }

    /// A function's context over `client` (the function's own identity).
    pub fn ctx(&self, client: &Client, cluster_name: &str) -> SimCtx {
        Ctx {
            cluster: KubeCluster::new(client.clone(), KERF_NAMESPACE),
            cloud: self.cloud.clone(),
            publisher: self.publisher.clone(),
            clock: self.clock.clone(),
            log: Logger::new(self.logs.clone(), self.clock.clone(), Level::Debug),
            metrics: Arc::default(),
            settings: Settings::new(cluster_name, KERF_NAMESPACE),
        }
    }

    /// A queue on the system clock (visibility timeout 30 s, as the template's).
    pub fn queue(&self) -> SimQueue {
        SimQueue::new(self.clock.clone(), SignedDuration::from_secs(30))
    }

    /// The log lines at warn level or above, for failure messages.
    pub fn warnings(&self) -> Vec<String> {
        self.logs
            .entries()
            .into_iter()
            .filter(|e| {
                matches!(
                    e["level"].as_str(),
                    Some("WARN" | "ERROR" | "warn" | "error")
                )
            })
            .map(|e| e.to_string())
            .collect()
    }
}

/// The EventBridge schedule's event (`shared/sim/src/world/deliver.rs` `sweep`).
pub fn scheduled_event(n: u64, now: jiff::Timestamp) -> Invocation {
    crate::events::invocation(&json!({"version": "0", "id": format!("sweep-{n}"),
        "detail-type": "Scheduled Event", "source": "aws.events", "time": rfc3339(now),
        "region": REGION, "resources": [], "detail": {}}))
}

/// The provisioner function, invoked by the schedule.
pub struct Provisioner {
    pub ctx: SimCtx,
    pub queue: SimQueue,
    invocations: u64,
}

impl std::fmt::Debug for Provisioner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Provisioner")
            .field("invocations", &self.invocations)
            .finish_non_exhaustive()
    }
}

impl Provisioner {
    pub fn new(shared: &Shared, client: &Client, cluster_name: &str) -> Provisioner {
        Provisioner {
            ctx: shared.ctx(client, cluster_name),
            queue: shared.queue(),
            invocations: 0,
        }
    }

    /// One scheduled invocation; its response.
    pub async fn sweep(&mut self) -> Value {
        self.invocations += 1;
        let event = scheduled_event(self.invocations, self.ctx.now());
        let holder = format!("provisioner-{}", self.invocations);
        to_json(&provisioner::handle(&self.ctx, &self.queue, &holder, &event).await)
    }

    /// Delivers every visible message of its queue (webhook hints, its own timers) as one
    /// batch, as the event source mapping does, and settles it; the response, or `None` when
    /// nothing was visible.
    pub async fn deliver(&mut self) -> Option<Value> {
        let messages = self.queue.receive(10);
        if messages.is_empty() {
            return None;
        }
        self.invocations += 1;
        let event = Invocation::Queue(SimQueue::event(&messages));
        let holder = format!("provisioner-{}", self.invocations);
        let resp = provisioner::handle(&self.ctx, &self.queue, &holder, &event).await;
        let resp = to_json(&resp);
        self.queue.settle(&messages, &resp);
        Some(resp)
    }
}

/// The termination function and its two queues (its own, and the disruption function's
/// timers it wakes).
pub struct Terminator {
    pub ctx: SimCtx,
    pub queue: SimQueue,
    pub timers: SimQueue,
}

impl std::fmt::Debug for Terminator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Terminator").finish_non_exhaustive()
    }
}

impl Terminator {
    pub fn new(shared: &Shared, client: &Client, cluster_name: &str) -> Terminator {
        Terminator {
            ctx: shared.ctx(client, cluster_name),
            queue: shared.queue(),
            timers: shared.queue(),
        }
    }

    /// Queues the termination of a NodeClaim (what deleting one leads to).
    pub async fn enqueue(&self, node_claim: &str) {
        kerf_control::retire::enqueue(&self.queue, node_claim, 0)
            .await
            .unwrap();
    }

    /// Delivers every visible message as one batch, as the event source mapping does, and
    /// settles it; the response, or `None` when nothing was visible.
    pub async fn deliver(&self) -> Option<Value> {
        let messages = self.queue.receive(10);
        if messages.is_empty() {
            return None;
        }
        let event = SimQueue::event(&messages);
        let resp = termination::handle(&self.ctx, &self.queue, &self.timers, &event).await;
        let resp = to_json(&resp);
        self.queue.settle(&messages, &resp);
        Some(resp)
    }
}
