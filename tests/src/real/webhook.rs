//! Kerf's webhook served over HTTPS on 127.0.0.1, so the real API server calls it: each
//! request becomes the Function URL event Lambda would hand the webhook function (path,
//! query, body) and is answered by Kerf's real handler under the webhook function's own
//! Kubernetes identity — the simulated world's server (`kerf_sim::world::real::webhook`). The
//! configurations are what `kerf webhooks` prints for this URL, with the server's CA as their
//! `caBundle`. Every review is recorded (kind, operation, allowed, patched) for the test to
//! assert on.

use std::sync::{Arc, Mutex};

use kerf_cli::webhooks::{StackOutputs, render};
use kerf_sim::world::real::webhook::WebhookServer as Served;
use kerf_sim::world::{SimCtx, SimQueue};
use serde_json::{Value, json};

/// One review the API server sent, as the webhook answered it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Call {
    /// `pods`, `pods/status`, `nodes`, `nodeclaims`, … (resource and subresource).
    pub resource: String,
    pub operation: String,
    pub name: String,
    pub allowed: bool,
    /// The answer carried a JSON patch.
    pub patched: bool,
    /// The denial's message.
    pub message: String,
    /// The transition the review's old and new objects show, if any (what Kerf's
    /// `matchConditions` select).
    pub transition: Option<Transition>,
}

/// What changed between a review's `oldObject` and `object`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transition {
    /// The pod's PodScheduled condition became False/Unschedulable.
    Unschedulable,
    /// The pod's phase became Running.
    Running,
    /// The node's Ready condition became True.
    Ready,
    /// The node lost a taint.
    Untainted,
    /// A pod bound to a node, not being deleted yet, is deleted.
    LeavesNode,
}

fn unschedulable(p: &Value) -> bool {
    p["status"]["conditions"].as_array().is_some_and(|cs| {
        cs.iter().any(|c| {
            c["type"] == "PodScheduled" && c["status"] == "False" && c["reason"] == "Unschedulable"
        })
    })
}

fn ready(n: &Value) -> bool {
    n["status"]["conditions"].as_array().is_some_and(|cs| {
        cs.iter()
            .any(|c| c["type"] == "Ready" && c["status"] == "True")
    })
}

fn taints(n: &Value) -> usize {
    n["spec"]["taints"].as_array().map_or(0, Vec::len)
}

/// The transition a review shows.
fn transition(r: &Value) -> Option<Transition> {
    let (old, new) = (&r["oldObject"], &r["object"]);
    let running = |p: &Value| p["status"]["phase"] == "Running";
    match (r["resource"]["resource"].as_str(), r["operation"].as_str()) {
        (Some("pods"), Some("DELETE")) => (old["spec"]["nodeName"]
            .as_str()
            .is_some_and(|n| !n.is_empty())
            && old["metadata"]["deletionTimestamp"].is_null())
        .then_some(Transition::LeavesNode),
        (Some("pods"), _) if unschedulable(new) && !unschedulable(old) => {
            Some(Transition::Unschedulable)
        }
        (Some("pods"), _) if running(new) && !running(old) => Some(Transition::Running),
        (Some("nodes"), _) if ready(new) && !ready(old) => Some(Transition::Ready),
        (Some("nodes"), _) if taints(new) < taints(old) => Some(Transition::Untainted),
        _ => None,
    }
}

/// The running server (the simulated world's, `kerf_sim::world::real::webhook`) and the
/// reviews it answered; dropping it stops it.
pub struct WebhookServer {
    served: Served,
    secret: String,
    calls: Arc<Mutex<Vec<Call>>>,
}

impl std::fmt::Debug for WebhookServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WebhookServer")
            .field("base_url", &self.served.base_url)
            .finish_non_exhaustive()
    }
}

fn record(request: &Value, answer: &Value) -> Call {
    let r = &request["request"];
    let mut resource = r["resource"]["resource"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    if let Some(sub) = r["subResource"].as_str().filter(|s| !s.is_empty()) {
        resource = format!("{resource}/{sub}");
    }
    let a = &answer["response"];
    Call {
        resource,
        operation: r["operation"].as_str().unwrap_or_default().to_string(),
        name: r["name"].as_str().unwrap_or_default().to_string(),
        allowed: a["allowed"].as_bool().unwrap_or(false),
        patched: a["patch"].as_str().is_some_and(|p| !p.is_empty()),
        message: a["status"]["message"]
            .as_str()
            .unwrap_or_default()
            .to_string(),
        transition: transition(r),
    }
}

impl WebhookServer {
    /// Serves the webhook handler over `ctx` (the webhook function's identity) with its two
    /// queues (provisioning hints, disruption timers) and path secret, recording every review.
    pub async fn start(
        ctx: SimCtx,
        queue: SimQueue,
        timers: SimQueue,
        secret: &str,
    ) -> WebhookServer {
        let calls: Arc<Mutex<Vec<Call>>> = Arc::default();
        let sink = calls.clone();
        let observer: kerf_sim::world::real::webhook::Observer =
            Arc::new(move |review: &Value, answer: &Value| {
                sink.lock().unwrap().push(record(review, answer));
            });
        let served = Served::observed(Arc::new(ctx), queue, timers, secret, Some(observer))
            .await
            .unwrap_or_else(|e| panic!("serving the webhook: {e}"));
        WebhookServer {
            served,
            secret: secret.to_string(),
            calls,
        }
    }

    /// What `kerf webhooks` prints for this server (stack outputs `WebhookUrl` and
    /// `ClusterName`), as YAML.
    pub fn rendered(&self, cluster: &str) -> String {
        let outputs = StackOutputs::parse(
            "stack-outputs.json",
            &json!([{"OutputKey": "WebhookUrl", "OutputValue": self.served.base_url},
                {"OutputKey": "ClusterName", "OutputValue": cluster}])
            .to_string(),
        )
        .unwrap();
        render(&outputs, &self.secret).unwrap()
    }

    /// Sets the server's CA as every webhook's `caBundle` in these configurations (a Function
    /// URL's certificate is public; this server's is signed by a CA generated at its start).
    pub fn trust(&self, docs: &mut [Value]) {
        for d in docs {
            for w in d["webhooks"].as_array_mut().into_iter().flatten() {
                w["clientConfig"]["caBundle"] = json!(self.served.ca_bundle);
            }
        }
    }

    /// From now on the webhook answers 500, or hangs past the API server's timeout (or
    /// answers again).
    pub fn set_outage(&self, outage: kerf_sim::world::real::webhook::Outage) {
        self.served.set_outage(outage);
    }

    /// Every review answered so far.
    pub fn calls(&self) -> Vec<Call> {
        self.calls.lock().unwrap().clone()
    }
}
