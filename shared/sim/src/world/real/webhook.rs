//! Kerf's webhook served over HTTPS on 127.0.0.1, so a real API server calls it: each request
//! becomes the Function URL event Lambda would hand the webhook function (path, query, body)
//! and is answered by Kerf's real handler under the webhook function's identity. The serving
//! certificate comes from a CA generated at start; the configurations are what `kerf webhooks`
//! prints for this URL, with that CA as their `caBundle`.

use std::sync::Arc;

use axum::body::Bytes;
use axum::http::{StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use base64::Engine;
use kerf_control::webhook::config::configurations;
use kube::Client;
use serde_json::{Value, json};
use tokio::sync::oneshot;

use super::super::wiring::{apply, http_event};
use super::super::{SimCtx, SimQueue, WorldError};
use crate::tls;

/// Told every review the handler answered (HTTP 200): the request body and the answer.
pub type Observer = Arc<dyn Fn(&Value, &Value) + Send + Sync>;

/// How the served webhook misbehaves (for outage tests): as a broken deploy answers, or a
/// throttled function that never does within the API server's timeout.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Outage {
    /// It answers.
    #[default]
    None,
    /// Every request gets HTTP 500.
    Error,
    /// Every request waits [`HANG`] before its 500: the API server gives up first.
    Hang,
}

/// How long a request waits under [`Outage::Hang`] (past any webhook's `timeoutSeconds`).
pub const HANG: std::time::Duration = std::time::Duration::from_secs(40);

/// What the handler needs, shared by every request.
struct Handler {
    ctx: Arc<SimCtx>,
    queue: SimQueue,
    timers: SimQueue,
    secret: String,
    observer: Option<Observer>,
    outage: Arc<std::sync::Mutex<Outage>>,
}

/// The running server; dropping it stops it.
pub struct WebhookServer {
    /// `https://127.0.0.1:PORT` (what the stack's `WebhookUrl` output would be).
    pub base_url: String,
    /// The generated CA's certificate, PEM, base64 (the configurations' `caBundle`).
    pub ca_bundle: String,
    secret: String,
    shutdown: Option<oneshot::Sender<()>>,
    outage: Arc<std::sync::Mutex<Outage>>,
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
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
    }
}

async fn answer(h: Arc<Handler>, uri: Uri, body: Bytes) -> Response {
    let outage = *h.outage.lock().unwrap_or_else(|e| e.into_inner());
    if outage != Outage::None {
        if outage == Outage::Hang {
            tokio::time::sleep(HANG).await;
        }
        return (StatusCode::INTERNAL_SERVER_ERROR, "outage").into_response();
    }
    let event = http_event(
        uri.path(),
        uri.query().unwrap_or_default(),
        &String::from_utf8_lossy(&body),
    );
    let r = kerf_control::handlers::webhook::handle(&h.ctx, &h.queue, &h.timers, &h.secret, &event)
        .await;
    if let Some(observe) = &h.observer
        && r.status == 200
        && let Ok(review) = serde_json::from_slice::<Value>(&body)
    {
        observe(&review, &r.body);
    }
    let status = StatusCode::from_u16(r.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    (
        status,
        [(header::CONTENT_TYPE, "application/json")],
        r.body.to_string(),
    )
        .into_response()
}

impl WebhookServer {
    /// Serves the webhook handler over `ctx` (the webhook function's identity) with its two
    /// queues (provisioning hints, disruption timers) and path secret.
    pub async fn start(
        ctx: Arc<SimCtx>,
        queue: SimQueue,
        timers: SimQueue,
        secret: &str,
    ) -> Result<WebhookServer, WorldError> {
        Self::observed(ctx, queue, timers, secret, None).await
    }

    /// [`WebhookServer::start`], telling `observer` every review answered.
    pub async fn observed(
        ctx: Arc<SimCtx>,
        queue: SimQueue,
        timers: SimQueue,
        secret: &str,
        observer: Option<Observer>,
    ) -> Result<WebhookServer, WorldError> {
        let tcp = tokio::net::TcpListener::bind(("127.0.0.1", 0))
            .await
            .map_err(|e| WorldError::Cluster(format!("the webhook's port: {e}")))?;
        let port = tcp
            .local_addr()
            .map_err(|e| WorldError::Cluster(format!("the webhook's port: {e}")))?
            .port();
        let outage: Arc<std::sync::Mutex<Outage>> = Arc::default();
        let handler = Arc::new(Handler {
            ctx,
            queue,
            timers,
            secret: secret.to_string(),
            observer,
            outage: outage.clone(),
        });
        let app = axum::Router::new().fallback(move |uri: Uri, body: Bytes| {
            let h = handler.clone();
            async move { answer(h, uri, body).await }
        });
        let (tx, rx) = oneshot::channel::<()>();
        let ca_pem = tls::serve(tcp, app, async move {
            let _ = rx.await;
        })?;
        Ok(WebhookServer {
            base_url: format!("https://127.0.0.1:{port}"),
            ca_bundle: base64::engine::general_purpose::STANDARD.encode(ca_pem),
            secret: secret.to_string(),
            shutdown: Some(tx),
            outage,
        })
    }

    /// From now on the webhook misbehaves as `outage` says (or answers again).
    pub fn set_outage(&self, outage: Outage) {
        *self.outage.lock().unwrap_or_else(|e| e.into_inner()) = outage;
    }

    /// The configurations `kerf webhooks` prints for this server, trusting its CA.
    pub fn configurations(&self, cluster: &str) -> Vec<Value> {
        let url = format!("{}/{}/admit", self.base_url, self.secret);
        let mut docs = configurations(&url, Some(cluster));
        for d in &mut docs {
            for w in d["webhooks"].as_array_mut().into_iter().flatten() {
                w["clientConfig"]["caBundle"] = json!(self.ca_bundle);
            }
        }
        docs
    }

    /// Registers the configurations with the API server.
    pub async fn register(&self, admin: &Client, cluster: &str) -> Result<(), WorldError> {
        for doc in self.configurations(cluster) {
            apply(admin, &doc.to_string())
                .await
                .map_err(|e| WorldError::Cluster(format!("the webhook configurations: {e}")))?;
        }
        Ok(())
    }
}
