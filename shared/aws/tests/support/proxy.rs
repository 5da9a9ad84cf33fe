//! A fault-injecting HTTP proxy in front of moto: throttling and 5xx answers, held connections
//! (timeouts), canned responses (recorded fixtures) and CreateFleet capacity errors for chosen
//! (type, zone, capacity type) overrides. It records every action it sees.

use std::convert::Infallible;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use tokio::net::{TcpListener, TcpStream};

use super::fleet_ice::{self, IceRule};
use super::form;

/// What to do with a matching request.
#[derive(Clone, Debug)]
pub enum Fault {
    /// Answer with this status and error code.
    Error { status: u16, code: String },
    /// Never answer.
    Hang,
    /// Answer with a canned body.
    Respond {
        status: u16,
        content_type: String,
        body: String,
    },
}

#[derive(Clone, Debug)]
struct Rule {
    action: String,
    fault: Fault,
    remaining: usize,
}

#[derive(Default)]
struct State {
    rules: Vec<Rule>,
    ice: Vec<IceRule>,
    /// (action, body) of every request.
    seen: Vec<(String, String)>,
}

type Shared = Arc<Mutex<State>>;

/// A running proxy; requests go to `url`.
pub struct Proxy {
    pub url: String,
    state: Shared,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Proxy {
    /// Starts a proxy forwarding to `upstream` (`http://host:port`).
    pub async fn start(upstream: &str) -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind proxy");
        let url = format!("http://{}", listener.local_addr().expect("addr"));
        let state: Shared = Arc::default();
        let upstream = upstream.trim_start_matches("http://").to_string();
        let st = state.clone();
        let task = tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let (st, up) = (st.clone(), upstream.clone());
                tokio::spawn(async move {
                    let svc =
                        hyper::service::service_fn(move |req| handle(req, st.clone(), up.clone()));
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), svc)
                        .await;
                });
            }
        });
        Proxy { url, state, task }
    }

    fn with<R>(&self, f: impl FnOnce(&mut State) -> R) -> R {
        f(&mut self.state.lock().expect("proxy state"))
    }

    /// Injects `fault` into the next `times` requests of `action`.
    pub fn inject(&self, action: &str, fault: Fault, times: usize) {
        self.with(|s| {
            s.rules.push(Rule {
                action: action.into(),
                fault,
                remaining: times,
            })
        });
    }

    pub fn error(&self, action: &str, status: u16, code: &str, times: usize) {
        self.inject(
            action,
            Fault::Error {
                status,
                code: code.into(),
            },
            times,
        );
    }

    /// CreateFleet overrides matching this rule fail with InsufficientInstanceCapacity.
    pub fn ice(&self, instance_type: &str, zone: Option<&str>, capacity_type: Option<&str>) {
        self.fleet_error(
            instance_type,
            zone,
            capacity_type,
            "InsufficientInstanceCapacity",
        );
    }

    /// CreateFleet overrides matching this rule fail with the per-override error `code`.
    pub fn fleet_error(
        &self,
        instance_type: &str,
        zone: Option<&str>,
        capacity_type: Option<&str>,
        code: &str,
    ) {
        let rule = IceRule {
            instance_type: instance_type.into(),
            zone: zone.map(str::to_string),
            capacity_type: capacity_type.map(str::to_string),
            code: code.into(),
        };
        self.with(|s| s.ice.push(rule));
    }

    /// How many requests of `action` arrived.
    pub fn count(&self, action: &str) -> usize {
        self.with(|s| s.seen.iter().filter(|(a, _)| a == action).count())
    }

    /// The decoded form bodies of every `action` request (query-protocol services).
    pub fn forms(&self, action: &str) -> Vec<Vec<(String, String)>> {
        self.with(|s| {
            s.seen
                .iter()
                .filter(|(a, _)| a == action)
                .map(|(_, b)| form::decode(b))
                .collect()
        })
    }
}

/// The operation: `X-Amz-Target`'s suffix (JSON protocols) or the form's `Action`.
fn action_of(target: Option<&str>, body: &str) -> String {
    if let Some(t) = target {
        return t.rsplit('.').next().unwrap_or(t).to_string();
    }
    form::decode(body)
        .into_iter()
        .find(|(k, _)| k == "Action")
        .map(|(_, v)| v)
        .unwrap_or_default()
}

fn take_fault(st: &Shared, action: &str) -> Option<Fault> {
    let mut s = st.lock().expect("proxy state");
    let rule = s
        .rules
        .iter_mut()
        .find(|r| r.action == action && r.remaining > 0)?;
    rule.remaining -= 1;
    Some(rule.fault.clone())
}

fn respond(status: u16, content_type: &str, body: String) -> Response<Full<Bytes>> {
    let mut r = Response::new(Full::new(Bytes::from(body)));
    *r.status_mut() =
        hyper::StatusCode::from_u16(status).unwrap_or(hyper::StatusCode::INTERNAL_SERVER_ERROR);
    r.headers_mut()
        .insert("content-type", content_type.parse().expect("content type"));
    r
}

fn error_response(json: bool, status: u16, code: &str) -> Response<Full<Bytes>> {
    let msg = format!("injected {code}");
    if json {
        let body = serde_json::json!({"__type": code, "message": msg}).to_string();
        let mut r = respond(status, "application/x-amz-json-1.1", body);
        r.headers_mut().insert(
            "x-amzn-query-error",
            format!("{code};Sender").parse().expect("hdr"),
        );
        return r;
    }
    let body = format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?><Response><Errors><Error><Code>{code}</Code>\
         <Message>{msg}</Message></Error></Errors><RequestID>injected</RequestID></Response>"
    );
    respond(status, "text/xml", body)
}

async fn handle(
    req: Request<Incoming>,
    st: Shared,
    upstream: String,
) -> Result<Response<Full<Bytes>>, Infallible> {
    let (parts, body) = req.into_parts();
    let body = body
        .collect()
        .await
        .map(|b| b.to_bytes())
        .unwrap_or_default();
    let text = String::from_utf8_lossy(&body).to_string();
    let target = parts
        .headers
        .get("x-amz-target")
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    let action = action_of(target.as_deref(), &text);
    st.lock()
        .expect("proxy state")
        .seen
        .push((action.clone(), text.clone()));
    match take_fault(&st, &action) {
        Some(Fault::Error { status, code }) => {
            return Ok(error_response(target.is_some(), status, &code));
        }
        Some(Fault::Respond {
            status,
            content_type,
            body,
        }) => return Ok(respond(status, &content_type, body)),
        Some(Fault::Hang) => {
            tokio::time::sleep(Duration::from_secs(3600)).await;
            return Ok(respond(504, "text/plain", String::new()));
        }
        None => {}
    }
    let ice = st.lock().expect("proxy state").ice.clone();
    if action == "CreateFleet" && !ice.is_empty() {
        return Ok(fleet_ice::create_fleet(&parts, &text, &ice, &upstream).await);
    }
    Ok(forward(&parts, body, &upstream).await)
}

/// Sends the request to moto unchanged (but for the body) and returns its answer.
pub async fn forward(
    parts: &hyper::http::request::Parts,
    body: Bytes,
    upstream: &str,
) -> Response<Full<Bytes>> {
    match try_forward(parts, body, upstream).await {
        Ok(r) => r,
        Err(e) => respond(502, "text/plain", format!("proxy: {e}")),
    }
}

async fn try_forward(
    parts: &hyper::http::request::Parts,
    body: Bytes,
    upstream: &str,
) -> Result<Response<Full<Bytes>>, Box<dyn std::error::Error + Send + Sync>> {
    let stream = TcpStream::connect(upstream).await?;
    let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream)).await?;
    tokio::spawn(conn);
    let mut req = Request::builder()
        .method(parts.method.clone())
        .uri(parts.uri.path_and_query().map_or("/", |p| p.as_str()));
    for (k, v) in &parts.headers {
        if k != "content-length" && k != "transfer-encoding" {
            req = req.header(k, v);
        }
    }
    let req = req
        .header("content-length", body.len())
        .body(Full::new(body))?;
    let resp = sender.send_request(req).await?;
    let (rp, rb) = resp.into_parts();
    let bytes = rb.collect().await?.to_bytes();
    let mut out = Response::new(Full::new(bytes));
    *out.status_mut() = rp.status;
    for (k, v) in &rp.headers {
        if k != "content-length" && k != "transfer-encoding" {
            out.headers_mut().insert(k, v.clone());
        }
    }
    Ok(out)
}
