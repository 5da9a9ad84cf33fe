//! A NodePool or EC2NodeClass created, or its spec changed: a [`TimerKind::Changed`] timer on
//! the disruption function's queue, which then writes their statuses (READY, NODECLASS) and
//! looks for drift at once instead of at its next scheduled pass, as Karpenter's controllers
//! react to the change. Status, metadata and dry-run writes wake nothing, so Kerf's own status
//! writes never wake it again. The message only wakes; a lost one costs latency.

use jiff::Timestamp;

use super::Request;
use super::validate::Kind;
use crate::ctx::Ctx;
use crate::log::controllers::WEBHOOK;
use crate::ports::{Cloud, Cluster, Publisher, Queue, TimerKind};
use crate::timers::set_timer;

/// Whether `req` creates a NodePool or EC2NodeClass or changes its spec.
pub fn wakes(kind: Kind, req: &Request) -> bool {
    if kind == Kind::NodeClaim || req.dry_run || !req.sub_resource.is_empty() {
        return false;
    }
    match (req.operation.as_str(), &req.old_object) {
        ("CREATE", _) => true,
        ("UPDATE", Some(old)) => old.get("spec") != req.object.get("spec"),
        _ => false,
    }
}

/// Wakes the disruption function when [`wakes`] says so.
pub async fn changed<C: Cluster, K: Cloud, P: Publisher, Q: Queue>(
    ctx: &Ctx<C, K, P>,
    disruption: &Q,
    kind: Kind,
    req: &Request,
) {
    if !wakes(kind, req) {
        return;
    }
    let now: Timestamp = ctx.now();
    let object = format!("{}/{}", req.kind, req.name);
    set_timer(ctx, disruption, WEBHOOK, TimerKind::Changed, now, &[object]).await;
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn req(operation: &str, old: Option<serde_json::Value>) -> Request {
        Request {
            uid: "u".into(),
            group: "karpenter.sh".into(),
            kind: "NodePool".into(),
            resource: "nodepools".into(),
            sub_resource: String::new(),
            operation: operation.into(),
            name: "default".into(),
            namespace: String::new(),
            object: json!({"spec": {"weight": 2}, "metadata": {"annotations": {"a": "1"}}}),
            old_object: old,
            dry_run: false,
        }
    }

    #[test]
    fn a_create_or_a_spec_change_wakes_and_nothing_else_does() {
        assert!(wakes(Kind::NodePool, &req("CREATE", None)));
        assert!(wakes(Kind::EC2NodeClass, &req("CREATE", None)));
        let spec_changed = req("UPDATE", Some(json!({"spec": {"weight": 1}})));
        assert!(wakes(Kind::NodePool, &spec_changed));
        let metadata_only = req("UPDATE", Some(json!({"spec": {"weight": 2}})));
        assert!(!wakes(Kind::NodePool, &metadata_only), "annotations only");
        assert!(!wakes(Kind::NodeClaim, &req("CREATE", None)), "Kerf's own");
        let dry = Request {
            dry_run: true,
            ..req("CREATE", None)
        };
        assert!(!wakes(Kind::NodePool, &dry));
        let status = Request {
            sub_resource: "status".into(),
            ..spec_changed.clone()
        };
        assert!(!wakes(Kind::NodePool, &status));
    }
}
