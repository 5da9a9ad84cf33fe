//! Kerf's in-process Kubernetes API server.
//!
//! [`Sim::start`] serves the Kubernetes REST API on `127.0.0.1:<random port>` (plain HTTP,
//! or HTTPS with a generated CA through [`SimBuilder::tls`]) so that a real `kube::Client`
//! can be tested against it. It keeps JSON objects in memory and honours the semantics Kerf
//! relies on: resourceVersion conflicts, generateName, status subresources, generation,
//! finalizers and deletionTimestamp, label and field selectors, limit/continue pagination,
//! merge / JSON / strategic patches, server-side apply with field ownership and
//! `metadata.managedFields` ([`apply`], [`managed`]), the pods/eviction subresource with
//! PodDisruptionBudgets, the scale subresource of Deployments ([`scale`]), short names in
//! discovery, watches with bookmarks, lists whose continue tokens read the first
//! page's snapshot, admission webhooks, a settable clock, and OpenAPI validation of the Karpenter
//! CRDs from `kerf_api::crds::all()`, including their CEL rules (a small interpreter, [`cel`]).
//!
//! Not modelled: namespaces need not exist, no garbage collector (ownerReferences and
//! propagationPolicy do not cascade) and dry-run writes are refused. Admission webhooks are
//! Rust callbacks ([`admission`]), not HTTP endpoints. Field ownership knows
//! the list types of the CRD schemas but only a table of them for built-in kinds
//! ([`shape`]).

pub mod admission;
pub mod apply;
pub mod binding;
pub mod budget;
pub mod cached;
pub mod defaults;
pub use kerf_schema::{cel, schema};
pub mod delete;
pub mod diff;
pub mod dryrun;
pub mod error;
pub mod eviction;
pub mod fields;
pub mod flaky;
pub mod karpenter;
pub mod managed;
pub mod meta;
pub mod openapi;
pub mod patch;
pub mod query;
pub mod read;
pub mod registry;
mod request;
pub mod route;
pub mod scale;
pub mod scenario;
pub mod selector;
mod server;
pub mod shape;
pub mod state;
pub mod store;
pub mod table;
pub mod tls;
pub mod watch;
pub mod world;
pub mod write;

pub use error::ApiError;
pub use state::{Exchange, Fault, RequestRecord, SimOptions};

use registry::Registry;
use serde_json::Value;
use state::State;
use std::sync::Arc;
use tokio::sync::oneshot;

/// Failures starting or using the sim.
#[derive(Debug, thiserror::Error)]
pub enum SimError {
    /// Binding or serving failed.
    #[error("io: {0}")]
    Io(#[from] std::io::Error),
    /// The port is taken (or not ours to listen on).
    #[error("cannot listen on 127.0.0.1:{port}: {source}")]
    Bind { port: u16, source: std::io::Error },
    /// Certificate generation or TLS setup failed.
    #[error("tls: {0}")]
    Tls(String),
    /// Building the kube client failed.
    #[error("kube client: {0}")]
    Client(String),
    /// A seeded object was rejected.
    #[error("seed rejected: {0}")]
    Seed(String),
}

/// Configures a [`Sim`] before starting it.
#[derive(Debug, Default)]
pub struct SimBuilder {
    options: SimOptions,
    port: u16,
    tls: bool,
    no_karpenter_crds: bool,
    crds: Vec<Value>,
    hooks: Vec<admission::Hook>,
}

impl SimBuilder {
    /// Serve HTTPS with a freshly generated CA (a build without the `tls` feature refuses to
    /// start, with [`tls::NO_TLS`]).
    pub fn tls(mut self, on: bool) -> Self {
        self.tls = on;
        self
    }

    /// Listens on this port of 127.0.0.1 (0, the default: any free port).
    pub fn port(mut self, port: u16) -> Self {
        self.port = port;
        self
    }

    /// Replaces the behaviour knobs.
    pub fn options(mut self, options: SimOptions) -> Self {
        self.options = options;
        self
    }

    /// Registers an extra CRD (JSON form of a `CustomResourceDefinition`).
    pub fn crd(mut self, crd: Value) -> Self {
        self.crds.push(crd);
        self
    }

    /// Registers an admission webhook.
    pub fn admission(mut self, hook: admission::Hook) -> Self {
        self.hooks.push(hook);
        self
    }

    /// Leaves out the Karpenter CRDs that are registered by default.
    pub fn without_karpenter_crds(mut self) -> Self {
        self.no_karpenter_crds = true;
        self
    }

    /// Binds 127.0.0.1 and starts serving on the current tokio runtime.
    pub async fn start(self) -> Result<Sim, SimError> {
        let mut registry = Registry::builtin();
        if !self.no_karpenter_crds {
            for crd in kerf_api::crds::all() {
                let v = serde_json::to_value(&crd).map_err(|e| SimError::Seed(e.to_string()))?;
                registry.add_crd(&v);
            }
        }
        for crd in &self.crds {
            registry.add_crd(crd);
        }
        let state = Arc::new(State::new(registry, self.options, self.hooks));
        let tcp = tokio::net::TcpListener::bind(("127.0.0.1", self.port))
            .await
            .map_err(|source| SimError::Bind {
                port: self.port,
                source,
            })?;
        let addr = tcp.local_addr()?;
        let app_state = state.clone();
        let app = axum::Router::new().fallback(move |req: axum::extract::Request| {
            let st = app_state.clone();
            async move { server::handle(st, req).await }
        });
        let (tx, rx) = oneshot::channel::<()>();
        let shutdown = async move {
            let _ = rx.await;
        };
        let (scheme, ca) = if self.tls {
            ("https", Some(tls::serve(tcp, app, shutdown)?))
        } else {
            tokio::spawn(
                axum::serve(tcp, app)
                    .with_graceful_shutdown(shutdown)
                    .into_future(),
            );
            ("http", None)
        };
        let url = format!("{scheme}://{addr}");
        Ok(Sim {
            cached: cached::Cached::new(state.clone()),
            state,
            url,
            ca_pem: ca,
            shutdown: Some(tx),
        })
    }
}

/// A running in-process API server; stops when dropped.
#[derive(Debug)]
pub struct Sim {
    state: Arc<State>,
    cached: cached::Cached,
    url: String,
    ca_pem: Option<String>,
    shutdown: Option<oneshot::Sender<()>>,
}

impl Drop for Sim {
    fn drop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
    }
}

impl Sim {
    /// A builder with default options, plain HTTP and the Karpenter CRDs.
    pub fn builder() -> SimBuilder {
        SimBuilder::default()
    }

    /// Starts a plain-HTTP server with default options.
    pub async fn start() -> Result<Self, SimError> {
        Self::builder().start().await
    }

    /// Base URL, e.g. `http://127.0.0.1:41234`.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// PEM of the CA that signed the server certificate (TLS mode only).
    pub fn ca_pem(&self) -> Option<&str> {
        self.ca_pem.as_deref()
    }

    /// A `kube::Client` for this server, with client-side retries off (see kube-testing §4).
    pub fn client(&self) -> Result<kube::Client, SimError> {
        self.client_as(None)
    }

    /// A client like [`Sim::client`] that sends `Authorization: Bearer <token>`.
    pub fn client_with_token(&self, token: &str) -> Result<kube::Client, SimError> {
        self.client_as(Some(token))
    }

    fn client_as(&self, token: Option<&str>) -> Result<kube::Client, SimError> {
        let err = |e: &dyn std::fmt::Display| SimError::Client(e.to_string());
        let uri = self.url.parse().map_err(|e| err(&e))?;
        let mut config = kube::Config::new(uri);
        config.default_retry = false;
        config.auth_info.token = token.map(|t| t.to_string().into());
        if let Some(pem) = &self.ca_pem {
            config.root_cert = Some(vec![pem_to_der(pem).map_err(|e| err(&e))?]);
        }
        kube::Client::try_from(config).map_err(|e| err(&e))
    }

    /// Stores an object directly (test harness, kubelet or controller stand-in): metadata is
    /// filled like a create, but status is kept and no schema validation runs.
    pub fn seed(&self, obj: Value) -> Result<Value, SimError> {
        seed::seed(&self.state, obj).map_err(|e| SimError::Seed(e.body.to_string()))
    }

    /// Typed reads straight from the store, for simulated components.
    pub fn cached(&self) -> cached::Cached {
        self.cached.clone()
    }

    /// Every request served so far.
    pub fn requests(&self) -> Vec<RequestRecord> {
        self.state.log.lock().map(|l| l.clone()).unwrap_or_default()
    }

    /// Keeps the bodies of every later request and reply in [`RequestRecord::exchange`] (for
    /// a replay against another server), or stops keeping them.
    pub fn record_bodies(&self, on: bool) {
        self.state
            .record_bodies
            .store(on, std::sync::atomic::Ordering::Relaxed);
    }

    /// Makes every later request wait `d` (wall clock) before it is served, as a remote API
    /// server's round trip would.
    pub fn set_latency(&self, d: std::time::Duration) {
        let us = u64::try_from(d.as_micros()).unwrap_or(u64::MAX);
        self.state
            .latency_us
            .store(us, std::sync::atomic::Ordering::Relaxed);
    }

    /// Makes the next matching requests fail with the given error.
    pub fn inject(&self, fault: Fault) {
        if let Ok(mut f) = self.state.faults.lock() {
            f.push(fault);
        }
    }

    /// Makes `rate` of the later requests carrying `Authorization: Bearer <token>` fail at
    /// random (seeded): writes with 409 Conflict, 500 or 504 Timeout, reads with 500 or 504.
    /// Draws are keyed by method and path, so the same seed fails the same requests whatever
    /// order concurrent requests arrive in.
    pub fn set_flaky(&self, token: &str, rate: f64, seed: u64) {
        if let Ok(mut f) = self.state.flaky.lock() {
            *f = Some((format!("Bearer {token}"), flaky::Flaky::new(rate, seed)));
        }
    }

    /// Forgets the change history: older watches and continue tokens then get 410.
    pub fn compact(&self) {
        self.state.store().compact();
    }

    /// The current global resourceVersion.
    pub fn resource_version(&self) -> u64 {
        self.state.store().rv()
    }
}

mod seed;

/// Decodes the first PEM block to DER.
pub fn pem_to_der(pem: &str) -> Result<Vec<u8>, base64::DecodeError> {
    use base64::Engine;
    let body: String = pem
        .lines()
        .skip_while(|l| !l.starts_with("-----BEGIN"))
        .skip(1)
        .take_while(|l| !l.starts_with("-----END"))
        .collect();
    base64::engine::general_purpose::STANDARD.decode(body)
}
