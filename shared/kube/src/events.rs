//! Kubernetes Events, written like Karpenter's client-go recorder: core/v1 Events from
//! source `karpenter`, in the involved object's namespace (`default` for cluster-scoped
//! objects). The name is derived from (uid, reason, message), so a repeated event bumps
//! `count` and `lastTimestamp` on the existing Event instead of piling up duplicates. A
//! warning is an ongoing condition (a drain a PDB blocks, a pod no NodePool fits): its name
//! leaves the message out, so its repeats fold into one Event, with a count and the latest
//! message, however their details change (as client-go's event aggregation folds similar
//! events).

use crate::error::{ClusterError, KubeResult};
use k8s_openapi::api::core::v1::{Event, EventSource, ObjectReference};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time};
use kerf_control::ports::{EventSpec, EventType};
use kube::Client;
use kube::api::{Api, Patch, PatchParams, PostParams};
use serde_json::json;

/// The component name Karpenter reports.
pub const COMPONENT: &str = "karpenter";

fn fnv64(parts: &[&str]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for p in parts {
        for b in p.bytes().chain(std::iter::once(0)) {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
    }
    h
}

/// The Event object for `spec` at `now`.
pub fn build(spec: &EventSpec, now: jiff::Timestamp) -> Event {
    let o = &spec.involved;
    let ns = if o.namespace.is_empty() {
        "default"
    } else {
        &o.namespace
    };
    let key = match spec.type_ {
        EventType::Normal => fnv64(&[&o.uid, spec.reason.as_str(), &spec.message]),
        EventType::Warning => fnv64(&[&o.uid, spec.reason.as_str()]),
    };
    let name = format!("{}.{key:016x}", o.name);
    Event {
        metadata: ObjectMeta {
            name: Some(name),
            namespace: Some(ns.to_string()),
            ..ObjectMeta::default()
        },
        involved_object: ObjectReference {
            api_version: Some(o.api_version.clone()),
            kind: Some(o.kind.clone()),
            name: Some(o.name.clone()),
            namespace: (!o.namespace.is_empty()).then(|| o.namespace.clone()),
            uid: Some(o.uid.clone()),
            ..ObjectReference::default()
        },
        reason: Some(spec.reason.as_str().into()),
        message: Some(spec.message.clone()),
        type_: Some(match spec.type_ {
            EventType::Normal => "Normal".into(),
            EventType::Warning => "Warning".into(),
        }),
        source: Some(EventSource {
            component: Some(COMPONENT.into()),
            host: None,
        }),
        reporting_component: Some(COMPONENT.into()),
        reporting_instance: Some(COMPONENT.into()),
        first_timestamp: Some(Time(now)),
        last_timestamp: Some(Time(now)),
        count: Some(1),
        ..Event::default()
    }
}

/// Creates the Event, or bumps `count`/`lastTimestamp` if the same one exists.
pub async fn emit(
    client: &Client,
    spec: &EventSpec,
    now: jiff::Timestamp,
) -> Result<(), ClusterError> {
    let ev = build(spec, now);
    let ns = ev.metadata.namespace.clone().unwrap_or_default();
    let api: Api<Event> = Api::namespaced(client.clone(), &ns);
    match api.create(&PostParams::default(), &ev).await {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(s)) if s.reason == "AlreadyExists" => {
            let name = ev.metadata.name.unwrap_or_default();
            let old = api.get(&name).await.kube()?;
            let rv = old.metadata.resource_version.unwrap_or_default();
            let patch = json!({"metadata": {"resourceVersion": rv},
                "count": old.count.unwrap_or(1) + 1, "lastTimestamp": Time(now),
                "message": spec.message});
            api.patch(&name, &PatchParams::default(), &Patch::Merge(&patch))
                .await
                .kube()?;
            Ok(())
        }
        Err(e) => Err(crate::error::classify(e)),
    }
}
