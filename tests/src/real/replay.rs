//! Replaying recorded API traffic against another server, for the conformance diff: the
//! requests the in-process server recorded (with their bodies, [`kerf_sim::Exchange`]) are
//! sent again, in order, to a fresh server, and each answer is reduced to what a client
//! depends on — the status code, the `kind`, a Status's `reason`, and the shape of the body
//! (its key paths).
//!
//! What a recording names that a new server makes afresh is carried over: an object created
//! with `generateName` is created under the name it got when recorded, and the uids and
//! resourceVersions a recorded reply handed out are rewritten, in the requests that follow, to
//! the ones this server handed out for the same objects.

use std::collections::{BTreeMap, BTreeSet};

use http_body_util::BodyExt;
use hyper::Request;
use kerf_sim::RequestRecord;
use kube::Client;
use serde_json::Value;

/// One request to replay.
#[derive(Debug, Clone)]
pub struct Step {
    pub method: String,
    pub uri: String,
    pub content_type: String,
    pub accept: String,
    pub body: Vec<u8>,
    /// The reply the recording got (JSON), for carrying names, uids and versions over.
    pub recorded: Option<Value>,
}

/// The requests of a recording that can be replayed (with bodies; watches are left out:
/// nothing a replay compares waits on them).
pub fn steps(records: &[RequestRecord]) -> Vec<Step> {
    records
        .iter()
        .filter(|r| !r.uri.contains("watch=true") && !r.uri.contains("watch=1"))
        .filter_map(|r| {
            let x = r.exchange.as_ref()?;
            Some(Step {
                method: r.method.clone(),
                uri: r.uri.clone(),
                content_type: x.content_type.clone(),
                accept: x.accept.clone(),
                body: x.body.to_vec(),
                recorded: serde_json::from_slice(&x.response).ok(),
            })
        })
        .collect()
}

/// What a server answered to one step.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answer {
    pub status: u16,
    /// `kind` of the reply (`Status`, `Pod`, `PodList`, ...), empty when not JSON.
    pub kind: String,
    /// A Status reply's `reason`.
    pub reason: String,
    /// A Status reply's `message` (not compared: wording differs; shown with a difference).
    pub message: String,
    /// Key paths of the reply (arrays as `[]`), at most [`DEPTH`] deep.
    pub shape: BTreeSet<String>,
}

/// How long a replayed request may take before it counts as unanswered (status 0).
pub const TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

/// The same for an eviction: kube-apiserver without its controllers leaves the evictions a
/// PodDisruptionBudget blocks unanswered (see the conformance test), and a drain retries them.
pub const EVICTION_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(2);

/// How deep a body's shape goes.
pub const DEPTH: usize = 4;

/// The key paths of `v` below `prefix`.
pub fn shape(v: &Value, prefix: &str, depth: usize, out: &mut BTreeSet<String>) {
    if depth == 0 {
        return;
    }
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                // Keys that are data, not schema: label, annotation and resource names.
                let data = matches!(
                    prefix.rsplit('.').next(),
                    Some(
                        "labels"
                            | "annotations"
                            | "capacity"
                            | "allocatable"
                            | "requests"
                            | "limits"
                            | "matchLabels"
                            | "nodeSelector"
                    )
                );
                let key = if data { "*" } else { k.as_str() };
                let path = format!("{prefix}.{key}");
                out.insert(path.clone());
                shape(x, &path, depth - 1, out);
            }
        }
        Value::Array(a) => {
            for x in a {
                shape(x, &format!("{prefix}[]"), depth, out);
            }
        }
        _ => {}
    }
}

/// Recorded uids and resourceVersions and what this server made of them.
#[derive(Debug, Default)]
struct Carry {
    uids: BTreeMap<String, String>,
    versions: BTreeMap<String, String>,
}

impl Carry {
    /// Learns from a reply to the same request: the recorded object(s) and this server's.
    fn learn(&mut self, recorded: &Value, here: &Value) {
        let mut pair = |a: &Value, b: &Value| {
            for (key, map) in [
                ("uid", &mut self.uids),
                ("resourceVersion", &mut self.versions),
            ] {
                if let (Some(x), Some(y)) =
                    (a["metadata"][key].as_str(), b["metadata"][key].as_str())
                    && x != y
                {
                    map.insert(x.to_string(), y.to_string());
                }
            }
        };
        pair(recorded, here);
        let named = |v: &Value| -> BTreeMap<(String, String), Value> {
            v["items"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|i| {
                    let m = &i["metadata"];
                    let k = (
                        m["namespace"].as_str().unwrap_or_default().to_string(),
                        m["name"].as_str().unwrap_or_default().to_string(),
                    );
                    (k, i.clone())
                })
                .collect()
        };
        let ours = named(here);
        for (k, item) in named(recorded) {
            if let Some(o) = ours.get(&k) {
                pair(&item, o);
            }
        }
    }

    /// Rewrites recorded uids and resourceVersions in a request body.
    fn rewrite(&self, v: &mut Value) {
        match v {
            Value::Object(m) => {
                for (k, x) in m.iter_mut() {
                    let map = match k.as_str() {
                        "uid" => Some(&self.uids),
                        "resourceVersion" => Some(&self.versions),
                        _ => None,
                    };
                    match (map, x.as_str()) {
                        (Some(map), Some(s)) => {
                            if let Some(to) = map.get(s) {
                                *x = Value::String(to.clone());
                            }
                        }
                        _ => self.rewrite(x),
                    }
                }
                // A JSON patch's test of a version or uid.
                let path = m.get("path").and_then(Value::as_str).unwrap_or_default();
                let map = if path.ends_with("/resourceVersion") {
                    Some(&self.versions)
                } else if path.ends_with("/uid") {
                    Some(&self.uids)
                } else {
                    None
                };
                if let (Some(map), Some(Value::String(s))) = (map, m.get_mut("value"))
                    && let Some(to) = map.get(s.as_str())
                {
                    *s = to.clone();
                }
            }
            Value::Array(a) => a.iter_mut().for_each(|x| self.rewrite(x)),
            _ => {}
        }
    }

    /// Rewrites a `resourceVersion=` in a query.
    fn rewrite_uri(&self, uri: &str) -> String {
        let Some((path, query)) = uri.split_once('?') else {
            return uri.to_string();
        };
        let parts: Vec<String> = query
            .split('&')
            .map(|p| match p.split_once('=') {
                Some(("resourceVersion", v)) => match self.versions.get(v) {
                    Some(to) => format!("resourceVersion={to}"),
                    None => p.to_string(),
                },
                _ => p.to_string(),
            })
            .collect();
        format!("{path}?{}", parts.join("&"))
    }
}

/// The body to send: recorded uids and versions rewritten, and a create by `generateName`
/// made under the name the recording got.
fn body_for(step: &Step, carry: &Carry) -> Vec<u8> {
    let Ok(mut v) = serde_json::from_slice::<Value>(&step.body) else {
        return step.body.clone();
    };
    carry.rewrite(&mut v);
    let recorded_name = step
        .recorded
        .as_ref()
        .and_then(|r| r["metadata"]["name"].as_str());
    if step.method == "POST"
        && v["metadata"]["generateName"].is_string()
        && v["metadata"]["name"].is_null()
        && let (Some(name), Some(meta)) = (recorded_name, v["metadata"].as_object_mut())
    {
        meta.remove("generateName");
        meta.insert("name".into(), Value::String(name.to_string()));
    }
    serde_json::to_vec(&v).unwrap_or_else(|_| step.body.clone())
}

/// The media types of an `Accept` that are JSON (a Table asked for stays asked for), so
/// replies compare as JSON; `application/json` when none is.
fn json_accept(accept: &str) -> String {
    let json: Vec<&str> = accept
        .split(',')
        .map(str::trim)
        .filter(|m| m.contains("json"))
        .collect();
    if json.is_empty() {
        "application/json".into()
    } else {
        json.join(",")
    }
}

/// Sends every step to the server behind `client`, in order; the answers.
pub async fn replay(client: &Client, steps: &[Step]) -> Vec<Answer> {
    let mut carry = Carry::default();
    let mut out = Vec::with_capacity(steps.len());
    for step in steps {
        let mut req = Request::builder()
            .method(step.method.as_str())
            .uri(carry.rewrite_uri(&step.uri));
        if !step.content_type.is_empty() {
            req = req.header("content-type", step.content_type.as_str());
        }
        req = req.header("accept", json_accept(&step.accept));
        // One user agent for every replayed request, so both servers name the same default
        // field manager.
        req = req.header("user-agent", "kerf-replay");
        let req = req
            .body(kube::client::Body::from(body_for(step, &carry)))
            .unwrap_or_else(|e| panic!("{} {}: {e}", step.method, step.uri));
        let limit = if step.uri.contains("/eviction") {
            EVICTION_TIMEOUT
        } else {
            TIMEOUT
        };
        let answered = tokio::time::timeout(limit, async {
            let resp = client.send(req).await?;
            let status = resp.status().as_u16();
            let bytes = resp.into_body().collect().await.map(|b| b.to_bytes());
            Ok::<_, kube::Error>((status, bytes.unwrap_or_default()))
        })
        .await;
        let (status, bytes) = match answered {
            Ok(Ok(a)) => a,
            Ok(Err(e)) => panic!("{} {}: {e}", step.method, step.uri),
            // No answer in time: recorded as status 0.
            Err(_) => {
                eprintln!(
                    "[replay] no answer within {TIMEOUT:?}: {} {}",
                    step.method, step.uri
                );
                (0, Default::default())
            }
        };
        let here: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
        if let Some(recorded) = &step.recorded {
            carry.learn(recorded, &here);
        }
        let mut s = BTreeSet::new();
        shape(&here, "", DEPTH, &mut s);
        out.push(Answer {
            status,
            kind: here["kind"].as_str().unwrap_or_default().to_string(),
            reason: here["reason"].as_str().unwrap_or_default().to_string(),
            message: here["message"].as_str().unwrap_or_default().to_string(),
            shape: s,
        });
    }
    out
}
