//! A local Lambda Runtime API (`/2018-06-01/runtime/...`), so a real function binary can be
//! started as a process and fed events: the binary long-polls `invocation/next`, answers on
//! `invocation/<id>/response` or `/error`, and reports start-up failures on `init/error`.

use std::collections::{BTreeMap, VecDeque};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path as UrlPath, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde_json::Value;
use tokio::sync::Notify;

#[derive(Default)]
struct Inner {
    pending: VecDeque<(String, Value)>,
    answers: BTreeMap<String, Result<Value, Value>>,
    init_error: Option<Value>,
    first_poll: Option<Instant>,
    next: u64,
}

#[derive(Clone, Default)]
struct Shared {
    inner: Arc<Mutex<Inner>>,
    events: Arc<Notify>,
    answered: Arc<Notify>,
}

impl Shared {
    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The local Runtime API server.
pub struct RuntimeApi {
    shared: Shared,
    /// `127.0.0.1:<port>`, the value of `AWS_LAMBDA_RUNTIME_API`.
    pub addr: String,
}

async fn next(State(s): State<Shared>) -> Response {
    loop {
        let waiting = s.events.notified();
        {
            let mut i = s.lock();
            i.first_poll.get_or_insert_with(Instant::now);
            if let Some((id, ev)) = i.pending.pop_front() {
                let mut h = HeaderMap::new();
                let deadline = (jiff::Timestamp::now().as_millisecond() + 60_000).to_string();
                for (k, v) in [
                    ("lambda-runtime-aws-request-id", id.as_str()),
                    ("lambda-runtime-deadline-ms", deadline.as_str()),
                    (
                        "lambda-runtime-invoked-function-arn",
                        "arn:aws:lambda:us-west-2:000000000000:function:kerf",
                    ),
                    (
                        "lambda-runtime-trace-id",
                        "Root=1-00000000-000000000000000000000000",
                    ),
                ] {
                    if let Ok(v) = HeaderValue::from_str(v) {
                        h.insert(k, v);
                    }
                }
                return (StatusCode::OK, h, ev.to_string()).into_response();
            }
        }
        waiting.await;
    }
}

fn json(body: &Bytes) -> Value {
    serde_json::from_slice(body)
        .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(body).into()))
}

async fn response(
    State(s): State<Shared>,
    UrlPath(id): UrlPath<String>,
    body: Bytes,
) -> StatusCode {
    s.lock().answers.insert(id, Ok(json(&body)));
    s.answered.notify_waiters();
    StatusCode::ACCEPTED
}

async fn error(State(s): State<Shared>, UrlPath(id): UrlPath<String>, body: Bytes) -> StatusCode {
    s.lock().answers.insert(id, Err(json(&body)));
    s.answered.notify_waiters();
    StatusCode::ACCEPTED
}

async fn init_error(State(s): State<Shared>, body: Bytes) -> StatusCode {
    s.lock().init_error = Some(json(&body));
    s.answered.notify_waiters();
    StatusCode::ACCEPTED
}

impl RuntimeApi {
    /// Serves on a free port of 127.0.0.1.
    pub async fn start() -> RuntimeApi {
        let shared = Shared::default();
        let app = Router::new()
            .route("/2018-06-01/runtime/invocation/next", get(next))
            .route(
                "/2018-06-01/runtime/invocation/{id}/response",
                post(response),
            )
            .route("/2018-06-01/runtime/invocation/{id}/error", post(error))
            .route("/2018-06-01/runtime/init/error", post(init_error))
            .with_state(shared.clone());
        let tcp = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind the runtime API");
        let addr = tcp.local_addr().expect("local addr").to_string();
        tokio::spawn(axum::serve(tcp, app).into_future());
        RuntimeApi { shared, addr }
    }

    /// Queues an event; returns its request id.
    pub fn push(&self, event: Value) -> String {
        let mut i = self.shared.lock();
        i.next += 1;
        let id = format!("req-{:04}", i.next);
        i.pending.push_back((id.clone(), event));
        drop(i);
        self.shared.events.notify_waiters();
        id
    }

    /// Invokes the function with `event` and waits up to `limit` for its answer
    /// (`Err`: the invocation error, or the init error, or a timeout).
    pub async fn invoke(&self, event: Value, limit: Duration) -> Result<Value, Value> {
        let id = self.push(event);
        self.wait(&id, limit).await
    }

    /// Waits for the answer to request `id`.
    pub async fn wait(&self, id: &str, limit: Duration) -> Result<Value, Value> {
        let end = Instant::now() + limit;
        loop {
            let answered = self.shared.answered.notified();
            {
                let i = self.shared.lock();
                if let Some(a) = i.answers.get(id) {
                    return a.clone();
                }
                if let Some(e) = &i.init_error {
                    return Err(e.clone());
                }
            }
            let left = end.saturating_duration_since(Instant::now());
            if left.is_zero() || tokio::time::timeout(left, answered).await.is_err() {
                return Err(Value::String(format!("no answer to {id} within {limit:?}")));
            }
        }
    }

    /// When the function first asked for work (its start-up is over).
    pub fn first_poll(&self) -> Option<Instant> {
        self.shared.lock().first_poll
    }
}

/// A function binary running against a [`RuntimeApi`]; killed on drop.
pub struct Function {
    child: Child,
    /// When the process was started.
    pub started: Instant,
}

impl Drop for Function {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Function {
    /// Waits up to `limit` for the process to exit; its status if it did.
    pub fn wait_exit(&mut self, limit: Duration) -> Option<std::process::ExitStatus> {
        let end = Instant::now() + limit;
        while Instant::now() < end {
            if let Ok(Some(s)) = self.child.try_wait() {
                return Some(s);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        None
    }

    /// Starts `binary` with the Lambda environment for `api` plus `env`; its output goes to
    /// `log` when given (tests that read it), else nowhere.
    pub fn start(
        binary: &Path,
        api: &RuntimeApi,
        env: &[(&str, String)],
        log: Option<&Path>,
    ) -> Function {
        let name = binary
            .file_name()
            .map(|f| f.to_string_lossy().to_string())
            .unwrap_or_default();
        let mut cmd = Command::new(binary);
        cmd.env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("AWS_LAMBDA_RUNTIME_API", &api.addr)
            .env("AWS_LAMBDA_FUNCTION_NAME", name)
            .env("AWS_LAMBDA_FUNCTION_MEMORY_SIZE", "512")
            .env("AWS_LAMBDA_FUNCTION_VERSION", "$LATEST")
            .env("AWS_LAMBDA_LOG_STREAM_NAME", "test")
            .env("AWS_LAMBDA_LOG_GROUP_NAME", "/aws/lambda/test")
            .env("AWS_LAMBDA_LOG_FORMAT", "json")
            .stdin(Stdio::null());
        match log {
            Some(path) => {
                let out = std::fs::File::create(path).expect("create the log file");
                let err = out.try_clone().expect("clone the log file");
                cmd.stdout(out).stderr(err);
            }
            None => {
                cmd.stdout(Stdio::null()).stderr(Stdio::null());
            }
        }
        for (k, v) in env {
            cmd.env(k, v);
        }
        let started = Instant::now();
        let child = cmd.spawn().expect("start the function binary");
        Function { child, started }
    }
}
