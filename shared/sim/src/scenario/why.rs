//! Why nothing happened: when an `until` or `expect` fails, the pods still pending with what
//! the provisioner last said about them (its `FailedScheduling` Events, the reasons `kerf
//! plan` gives) and the NodePools that are not ready, with their conditions. The same on
//! Kerf's side and on Karpenter's: both write those Events and conditions.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{Event, Pod};
use kerf_api::v1::{ConditionStatus, NodePool};
use kerf_control::ports::EventReason;

/// At most this many reasons are listed, each with at most this many pod names.
const REASONS: usize = 5;
const NAMES: usize = 3;

/// The lines that explain the pods still pending and the NodePools not ready.
pub fn why(pods: &[Pod], events: &[Event], pools: &[NodePool]) -> Vec<String> {
    let mut out = pending(pods, events);
    out.extend(pools.iter().filter_map(unready));
    out
}

fn name(p: &Pod) -> &str {
    p.metadata.name.as_deref().unwrap_or_default()
}

/// `n pods pending (a, b, c, …): reason`, one line per distinct reason, most pods first.
fn pending(pods: &[Pod], events: &[Event]) -> Vec<String> {
    let waiting = pods.iter().filter(|p| {
        p.metadata.deletion_timestamp.is_none()
            && p.spec.as_ref().is_none_or(|s| s.node_name.is_none())
    });
    let mut by_reason: BTreeMap<String, Vec<&str>> = BTreeMap::new();
    for p in waiting {
        let reason = last_said(p, events).unwrap_or_else(|| "no scheduling decision yet".into());
        by_reason.entry(reason).or_default().push(name(p));
    }
    let mut groups: Vec<(String, Vec<&str>)> = by_reason.into_iter().collect();
    groups.sort_by(|a, b| b.1.len().cmp(&a.1.len()).then(a.0.cmp(&b.0)));
    let more = groups.len().saturating_sub(REASONS);
    let mut out: Vec<String> = groups
        .into_iter()
        .take(REASONS)
        .map(|(reason, mut names)| {
            names.sort_unstable();
            let n = names.len();
            let mut shown = names[..n.min(NAMES)].join(", ");
            if n > NAMES {
                shown.push_str(", …");
            }
            format!("{n} {} pending ({shown}): {reason}", plural(n, "pod"))
        })
        .collect();
    if more > 0 {
        out.push(format!("and {more} more {}", plural(more, "reason")));
    }
    out
}

fn plural(n: usize, word: &str) -> String {
    if n == 1 {
        word.to_string()
    } else {
        format!("{word}s")
    }
}

/// The provisioner's last `FailedScheduling` message for `p` (kube-scheduler's own, `0/3
/// nodes are available…`, only when the provisioner said nothing).
fn last_said(p: &Pod, events: &[Event]) -> Option<String> {
    let uid = p.metadata.uid.as_deref();
    let mine = |e: &&Event| {
        let o = &e.involved_object;
        e.reason.as_deref() == Some(EventReason::FailedScheduling.as_str())
            && o.kind.as_deref() == Some("Pod")
            && o.name.as_deref() == p.metadata.name.as_deref()
            && o.namespace.as_deref() == p.metadata.namespace.as_deref()
            && (uid.is_none() || o.uid.is_none() || o.uid.as_deref() == uid)
    };
    let scheduler = |e: &Event| {
        e.source.as_ref().and_then(|s| s.component.as_deref()) == Some("default-scheduler")
            || e.reporting_component.as_deref() == Some("default-scheduler")
    };
    let latest = |it: Vec<&Event>| {
        it.into_iter()
            .max_by_key(|e| {
                e.last_timestamp
                    .as_ref()
                    .map(|t| t.0)
                    .or_else(|| e.event_time.as_ref().map(|t| t.0))
            })
            .and_then(|e| e.message.clone())
    };
    let (scheduler_said, ours): (Vec<&Event>, Vec<&Event>) =
        events.iter().filter(mine).partition(|e| scheduler(e));
    latest(ours).or_else(|| latest(scheduler_said))
}

/// `nodepool default not ready: NodeClassReady False (NodeClassNotFound: …)`, when its
/// `Ready` condition is false.
fn unready(np: &NodePool) -> Option<String> {
    let conds = &np.status.as_ref()?.conditions;
    let is_false = |t: &str| {
        conds
            .iter()
            .any(|c| c.type_ == t && c.status == ConditionStatus::False)
    };
    if !is_false("Ready") {
        return None;
    }
    let causes: Vec<String> = conds
        .iter()
        .filter(|c| c.type_ != "Ready" && c.status == ConditionStatus::False)
        .map(|c| match c.message.as_str() {
            "" => format!("{} False ({})", c.type_, c.reason),
            m => format!("{} False ({}: {m})", c.type_, c.reason),
        })
        .collect();
    let name = np.metadata.name.as_deref().unwrap_or_default();
    Some(if causes.is_empty() {
        format!("nodepool {name} not ready")
    } else {
        format!("nodepool {name} not ready: {}", causes.join("; "))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn pod(name: &str, node: Option<&str>) -> Pod {
        serde_json::from_value(json!({"metadata": {"name": name, "namespace": "default",
            "uid": format!("u-{name}")}, "spec": {"containers": [], "nodeName": node}}))
        .unwrap()
    }

    fn failed(pod: &str, by: &str, at: &str, message: &str) -> Event {
        serde_json::from_value(json!({"metadata": {"name": format!("{pod}.{at}")},
            "reason": "FailedScheduling", "message": message, "lastTimestamp": at,
            "source": {"component": by},
            "involvedObject": {"kind": "Pod", "name": pod, "namespace": "default",
                "uid": format!("u-{pod}")}}))
        .unwrap()
    }

    fn pool(name: &str, conds: serde_json::Value) -> NodePool {
        serde_json::from_value(json!({"apiVersion": "karpenter.sh/v1", "kind": "NodePool",
            "metadata": {"name": name}, "spec": {"template": {"spec": {"nodeClassRef":
            {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"},
            "requirements": []}}}, "status": {"conditions": conds}}))
        .unwrap()
    }

    fn cond(t: &str, status: &str, reason: &str, message: &str) -> serde_json::Value {
        json!({"type": t, "status": status, "reason": reason, "message": message,
            "lastTransitionTime": "2026-01-01T00:00:00Z"})
    }

    #[test]
    fn pending_pods_are_grouped_by_what_the_provisioner_last_said() {
        let pods = [
            pod("a", None),
            pod("b", None),
            pod("c", None),
            pod("d", None),
            pod("e", None),
            pod("running", Some("n1")),
        ];
        let events = [
            failed("a", "karpenter", "2026-01-01T00:00:01Z", "old reason"),
            failed("a", "karpenter", "2026-01-01T00:00:05Z", "too big"),
            failed(
                "a",
                "default-scheduler",
                "2026-01-01T00:00:09Z",
                "0/1 nodes",
            ),
            failed("b", "karpenter", "2026-01-01T00:00:05Z", "too big"),
            failed("c", "karpenter", "2026-01-01T00:00:05Z", "too big"),
            failed("d", "karpenter", "2026-01-01T00:00:05Z", "too big"),
            failed(
                "e",
                "default-scheduler",
                "2026-01-01T00:00:05Z",
                "0/1 nodes",
            ),
        ];
        assert_eq!(
            why(&pods, &events, &[]),
            [
                "4 pods pending (a, b, c, …): too big",
                "1 pod pending (e): 0/1 nodes",
            ]
        );
        assert_eq!(
            why(&[pod("f", None)], &[], &[]),
            ["1 pod pending (f): no scheduling decision yet"]
        );
    }

    #[test]
    fn a_nodepool_not_ready_says_which_condition_holds_it() {
        let missing = pool(
            "default",
            json!([
                cond(
                    "NodeClassReady",
                    "False",
                    "NodeClassNotFound",
                    "NodeClass not found on cluster"
                ),
                cond("ValidationSucceeded", "True", "ValidationSucceeded", ""),
                cond(
                    "Ready",
                    "False",
                    "UnhealthyDependents",
                    "NodeClassReady=False"
                ),
            ]),
        );
        let ready = pool("spot", json!([cond("Ready", "True", "Ready", "")]));
        assert_eq!(
            why(&[], &[], &[missing, ready]),
            [
                "nodepool default not ready: NodeClassReady False (NodeClassNotFound: NodeClass \
                 not found on cluster)"
            ]
        );
    }
}
