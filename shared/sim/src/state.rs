//! Shared server state: the registry, the store, options, the request log and faults.

use crate::error::ApiError;
use crate::registry::Registry;
use crate::store::Store;
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

/// Behaviour knobs.
#[derive(Debug, Clone)]
pub struct SimOptions {
    /// Leave bound, running pods Terminating on delete/eviction (like a kubelet that
    /// has not finished yet) instead of removing them at once.
    pub graceful_pod_deletion: bool,
    /// A disruption controller keeps PodDisruptionBudgets' status current (the simulated
    /// world runs one): evictions go by the stored status, as kube-apiserver's do, instead of
    /// computing it at each eviction.
    pub disruption_controller: bool,
    /// How often a watch with `allowWatchBookmarks` gets a BOOKMARK.
    pub bookmark_interval: Duration,
    /// Upper bound on a watch's duration (the client's `timeoutSeconds` is honoured below it).
    pub max_watch: Duration,
    /// Number of changes kept for watches; older resourceVersions get 410.
    pub history: usize,
    /// The server's clock.
    pub clock: crate::store::SimClock,
}

impl Default for SimOptions {
    fn default() -> Self {
        Self {
            graceful_pod_deletion: false,
            disruption_controller: false,
            bookmark_interval: Duration::from_secs(1),
            max_watch: Duration::from_secs(300),
            history: 20_000,
            clock: crate::store::SimClock::system(),
        }
    }
}

/// One served request, for assertions in tests.
#[derive(Debug, Clone)]
pub struct RequestRecord {
    /// HTTP method.
    pub method: String,
    /// Path and query.
    pub uri: String,
    /// The `Authorization` header, if any.
    pub authorization: Option<String>,
    /// HTTP status of the reply.
    pub status: u16,
    /// The bodies, when the server records them ([`State::record_bodies`]).
    pub exchange: Option<Box<Exchange>>,
}

/// A request's and its reply's bodies, for a replay against another server.
#[derive(Debug, Clone)]
pub struct Exchange {
    /// The request's `Content-Type`.
    pub content_type: String,
    /// The request's `Accept`.
    pub accept: String,
    pub body: bytes::Bytes,
    /// The reply's JSON body (empty for a stream or protobuf).
    pub response: bytes::Bytes,
}

/// An injected failure: the next `times` requests whose method and path match get `error`.
#[derive(Debug, Clone)]
pub struct Fault {
    /// Method to match (`GET`, `POST`, ...), or empty for any.
    pub method: String,
    /// Substring of the path to match.
    pub path_contains: String,
    /// How many more requests to fail.
    pub times: usize,
    /// The error to answer with.
    pub error: ApiError,
}

/// Everything a request handler needs.
#[derive(Debug)]
pub struct State {
    /// Served resources.
    pub registry: Registry,
    /// Objects.
    pub store: Mutex<Store>,
    /// Knobs.
    pub options: SimOptions,
    /// Served requests.
    pub log: Mutex<Vec<RequestRecord>>,
    /// Pending injected failures.
    pub faults: Mutex<Vec<Fault>>,
    /// Random failures for requests with this `Authorization` header.
    pub flaky: Mutex<Option<(String, crate::flaky::Flaky)>>,
    /// Admission webhooks.
    pub hooks: Vec<crate::admission::Hook>,
    /// Wall-clock time every request waits before it is served, in microseconds (a remote
    /// API server's round trip; zero by default).
    pub latency_us: std::sync::atomic::AtomicU64,
    /// Whether [`RequestRecord::exchange`] is kept (off by default: bodies cost memory).
    pub record_bodies: std::sync::atomic::AtomicBool,
}

impl State {
    /// Builds the state.
    pub fn new(
        registry: Registry,
        options: SimOptions,
        hooks: Vec<crate::admission::Hook>,
    ) -> Self {
        Self {
            store: Mutex::new(Store::new(options.history, options.clock.clone())),
            registry,
            options,
            log: Mutex::new(Vec::new()),
            faults: Mutex::new(Vec::new()),
            flaky: Mutex::new(None),
            hooks,
            latency_us: Default::default(),
            record_bodies: Default::default(),
        }
    }

    /// Locks the store (a poisoned lock is recovered: the data is plain JSON).
    pub fn store(&self) -> MutexGuard<'_, Store> {
        self.store.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Takes the first matching injected fault, if any.
    pub fn take_fault(&self, method: &str, path: &str) -> Option<ApiError> {
        let mut faults = self.faults.lock().unwrap_or_else(|e| e.into_inner());
        let i = faults.iter().position(|f| {
            (f.method.is_empty() || f.method == method) && path.contains(&f.path_contains)
        })?;
        let err = faults[i].error.clone();
        faults[i].times -= 1;
        if faults[i].times == 0 {
            faults.remove(i);
        }
        Some(err)
    }

    /// A random failure for a request from the flaky client, if it draws one.
    pub fn take_flaky(&self, method: &str, path: &str, auth: Option<&str>) -> Option<ApiError> {
        let f = self.flaky.lock().unwrap_or_else(|e| e.into_inner());
        let (token, flaky) = f.as_ref()?;
        if auth != Some(token.as_str()) {
            return None;
        }
        let write = method != "GET";
        let pick = flaky.pick(&format!("{method} {path}"), if write { 3 } else { 2 })?;
        Some(match (write, pick) {
            (true, 0) => ApiError::new(
                409,
                "Conflict",
                "Operation cannot be fulfilled: the object has been modified (injected)".into(),
                None,
            ),
            (_, 1) | (false, 0) => {
                ApiError::new(500, "InternalError", "injected failure".into(), None)
            }
            _ => ApiError::new(
                504,
                "Timeout",
                "the request timed out (injected)".into(),
                None,
            ),
        })
    }

    /// Appends to the request log.
    pub fn record(&self, r: RequestRecord) {
        self.log.lock().unwrap_or_else(|e| e.into_inner()).push(r);
    }
}
