//! Reads of the real cluster for the provisioning test: the inflate pods, NodeClaims as
//! JSON, a Node, a condition, and a recorder of every watch event of a kind (what the API
//! server did, not only where it ended).

use std::sync::{Arc, Mutex};

use futures::{StreamExt, TryStreamExt};
use k8s_openapi::api::core::v1::{Node, Pod};
use kerf_api::v1::NodeClaim;
use kube::api::{Api, ListParams, WatchEvent, WatchParams};
use kube::{Client, Resource};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

/// The inflate pods, as JSON.
pub async fn inflate_pods(client: &Client) -> Vec<Value> {
    let lp = ListParams::default().labels("app=inflate");
    let pods = Api::<Pod>::namespaced(client.clone(), "default")
        .list(&lp)
        .await
        .unwrap();
    pods.items
        .iter()
        .map(|p| serde_json::to_value(p).unwrap())
        .collect()
}

/// Names of the inflate pods Running and not being deleted.
pub fn running(pods: &[Value]) -> Vec<String> {
    pods.iter()
        .filter(|p| {
            p["status"]["phase"] == "Running" && p["metadata"]["deletionTimestamp"].is_null()
        })
        .map(|p| {
            p["metadata"]["name"]
                .as_str()
                .unwrap_or_default()
                .to_string()
        })
        .collect()
}

/// Whether kube-scheduler found no node for the pod.
pub fn unschedulable(pod: &Value) -> bool {
    pod["status"]["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|c| {
            c["type"] == "PodScheduled" && c["status"] == "False" && c["reason"] == "Unschedulable"
        })
}

/// `name phase node` per pod, for failure messages.
pub fn summary(pods: &[Value]) -> String {
    pods.iter()
        .map(|p| {
            format!(
                "{} {} {}",
                p["metadata"]["name"], p["status"]["phase"], p["spec"]["nodeName"]
            )
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// Every NodeClaim, as JSON. A 429 (kube-apiserver answers "storage is (re)initializing"
/// while its watch cache restarts) is retried after its Retry-After, as kubectl does.
pub async fn claims(client: &Client) -> Vec<Value> {
    let api = Api::<NodeClaim>::all(client.clone());
    let mut tries = 0;
    let list = loop {
        match api.list(&ListParams::default()).await {
            Err(kube::Error::Api(s)) if s.code == 429 && tries < 30 => {
                tries += 1;
                tokio::time::sleep(std::time::Duration::from_secs(1)).await;
            }
            other => break other.unwrap(),
        }
    };
    list.items
        .iter()
        .map(|c| serde_json::to_value(c).unwrap())
        .collect()
}

/// A Node as JSON, `None` once it is gone.
pub async fn node(client: &Client, name: &str) -> Option<Value> {
    let n = Api::<Node>::all(client.clone())
        .get_opt(name)
        .await
        .unwrap();
    n.map(|n| serde_json::to_value(n).unwrap())
}

/// The status of condition `type_` in `obj`'s status.
pub fn condition<'a>(obj: &'a Value, type_: &str) -> Option<&'a str> {
    obj["status"]["conditions"]
        .as_array()?
        .iter()
        .find(|c| c["type"] == type_)?["status"]
        .as_str()
}

/// Every watch event of one kind since it started: `(type, object)`.
#[derive(Debug, Clone, Default)]
pub struct Recorder(Arc<Mutex<Vec<(String, Value)>>>);

impl Recorder {
    /// Watches `api` (selected by `labels`) from now on, in the background.
    pub async fn start<K>(api: Api<K>, labels: &str) -> Recorder
    where
        K: Resource + Clone + DeserializeOwned + Serialize + std::fmt::Debug + Send + 'static,
    {
        let rec = Recorder::default();
        let (mut lp, mut wp) = (ListParams::default(), WatchParams::default().timeout(290));
        if !labels.is_empty() {
            (lp, wp) = (lp.labels(labels), wp.labels(labels));
        }
        let list = api.list(&lp).await.unwrap();
        let rv = list.metadata.resource_version.unwrap_or_default();
        let mut stream = api.watch(&wp, &rv).await.unwrap().boxed();
        let events = rec.0.clone();
        tokio::spawn(async move {
            while let Ok(Some(e)) = stream.try_next().await {
                let entry = match e {
                    WatchEvent::Added(o) => ("ADDED", o),
                    WatchEvent::Modified(o) => ("MODIFIED", o),
                    WatchEvent::Deleted(o) => ("DELETED", o),
                    _ => continue,
                };
                let v = serde_json::to_value(&entry.1).unwrap_or_default();
                events.lock().unwrap().push((entry.0.to_string(), v));
            }
        });
        rec
    }

    /// The events so far.
    pub fn events(&self) -> Vec<(String, Value)> {
        self.0.lock().unwrap().clone()
    }
}
