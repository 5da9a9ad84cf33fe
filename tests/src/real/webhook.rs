//! Kerf's webhook served over HTTPS on 127.0.0.1, so the real API server calls it: each
//! request becomes the Function URL event Lambda would hand the webhook function (path,
//! query, body) and is answered by Kerf's real handler under the webhook function's own
//! Kubernetes identity. The serving certificate is the one `scripts/cluster.sh up` signs
//! with the cluster's CA (`pki/webhook.crt`, for 127.0.0.1); the configurations are what
//! `kerf webhooks` prints for this URL, with that CA as their `caBundle`. Every review is
//! recorded (kind, operation, allowed, patched) for the test to assert on.

use std::path::Path;
use std::sync::{Arc, Mutex};

use base64::Engine;
use http_body_util::{BodyExt, Full};
use hyper::body::{Bytes, Incoming};
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use kerf_cli::webhooks::{StackOutputs, render};
use kerf_sim::world::{SimCtx, SimQueue};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use serde_json::{Value, json};
use tokio::net::TcpListener;
use tokio::task::JoinHandle;
use tokio_rustls::TlsAcceptor;

use super::cluster::ControlPlane;

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

/// What the handler needs, shared by every connection.
struct State {
    ctx: SimCtx,
    queue: SimQueue,
    timers: SimQueue,
    secret: String,
    calls: Mutex<Vec<Call>>,
}

/// The running server; dropping it stops it.
pub struct WebhookServer {
    /// `https://127.0.0.1:PORT` (what the stack's `WebhookUrl` output would be).
    pub base_url: String,
    /// The cluster CA's certificate, PEM, base64 (the configurations' `caBundle`).
    pub ca_bundle: String,
    state: Arc<State>,
    task: JoinHandle<()>,
}

impl std::fmt::Debug for WebhookServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WebhookServer")
            .field("base_url", &self.base_url)
            .finish_non_exhaustive()
    }
}

impl Drop for WebhookServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

fn tls(pki: &Path) -> TlsAcceptor {
    let certs: Vec<CertificateDer<'static>> =
        CertificateDer::pem_file_iter(pki.join("webhook.crt"))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
    let key = PrivateKeyDer::from_pem_file(pki.join("webhook.key")).unwrap();
    let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
    let config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(certs, key)
        .unwrap();
    TlsAcceptor::from(Arc::new(config))
}

/// The Function URL event (payload v2) of an HTTP request.
fn event(path: &str, query: &str, body: &[u8]) -> Value {
    json!({"version": "2.0", "routeKey": "$default", "rawPath": path,
        "rawQueryString": query, "headers": {"content-type": "application/json"},
        "requestContext": {"http": {"method": "POST", "path": path, "sourceIp": "127.0.0.1"}},
        "body": String::from_utf8_lossy(body), "isBase64Encoded": false})
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

async fn serve(state: Arc<State>, req: Request<Incoming>) -> Response<Full<Bytes>> {
    let path = req.uri().path().to_string();
    let query = req.uri().query().unwrap_or_default().to_string();
    let body = match req.into_body().collect().await {
        Ok(b) => b.to_bytes(),
        Err(e) => {
            return Response::builder()
                .status(400)
                .body(Full::new(Bytes::from(e.to_string())))
                .unwrap();
        }
    };
    let ev = event(&path, &query, &body);
    let s = &state;
    let r =
        kerf_control::handlers::webhook::handle(&s.ctx, &s.queue, &s.timers, &s.secret, &ev).await;
    if r.status == 200
        && let Ok(review) = serde_json::from_slice::<Value>(&body)
    {
        s.calls.lock().unwrap().push(record(&review, &r.body));
    }
    Response::builder()
        .status(r.status)
        .header("content-type", "application/json")
        .body(Full::new(Bytes::from(r.body.to_string())))
        .unwrap()
}

async fn accept_loop(listener: TcpListener, acceptor: TlsAcceptor, state: Arc<State>) {
    loop {
        let Ok((tcp, _)) = listener.accept().await else {
            continue;
        };
        let (acceptor, state) = (acceptor.clone(), state.clone());
        tokio::spawn(async move {
            let Ok(tls) = acceptor.accept(tcp).await else {
                return;
            };
            let service = hyper::service::service_fn(move |req| {
                let state = state.clone();
                async move { Ok::<_, std::convert::Infallible>(serve(state, req).await) }
            });
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(tls), service)
                .await;
        });
    }
}

impl WebhookServer {
    /// Serves the webhook handler over `ctx` (the webhook function's identity) with its two
    /// queues (provisioning hints, disruption timers) and path secret.
    pub async fn start(
        cp: &ControlPlane,
        ctx: SimCtx,
        queue: SimQueue,
        timers: SimQueue,
        secret: &str,
    ) -> WebhookServer {
        let pki = cp.run_dir.join("pki");
        let acceptor = tls(&pki);
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let state = Arc::new(State {
            ctx,
            queue,
            timers,
            secret: secret.to_string(),
            calls: Mutex::default(),
        });
        let task = tokio::spawn(accept_loop(listener, acceptor, state.clone()));
        let ca = std::fs::read(pki.join("ca.crt")).unwrap();
        WebhookServer {
            base_url: format!("https://127.0.0.1:{port}"),
            ca_bundle: base64::engine::general_purpose::STANDARD.encode(ca),
            state,
            task,
        }
    }

    /// What `kerf webhooks` prints for this server (stack outputs `WebhookUrl` and
    /// `ClusterName`), as YAML.
    pub fn rendered(&self, cluster: &str) -> String {
        let outputs = StackOutputs::parse(
            "stack-outputs.json",
            &json!([{"OutputKey": "WebhookUrl", "OutputValue": self.base_url},
                {"OutputKey": "ClusterName", "OutputValue": cluster}])
            .to_string(),
        )
        .unwrap();
        render(&outputs, &self.state.secret).unwrap()
    }

    /// Sets the cluster CA as every webhook's `caBundle` in these configurations (a Function
    /// URL's certificate is public; this server's is the cluster CA's).
    pub fn trust(&self, docs: &mut [Value]) {
        for d in docs {
            for w in d["webhooks"].as_array_mut().into_iter().flatten() {
                w["clientConfig"]["caBundle"] = json!(self.ca_bundle);
            }
        }
    }

    /// Every review answered so far.
    pub fn calls(&self) -> Vec<Call> {
        self.state.calls.lock().unwrap().clone()
    }
}
