//! A NodePool or EC2NodeClass created, or its spec changed: a [`TimerKind::Changed`] timer on
//! the disruption function's queue, which then writes their statuses (READY, NODECLASS) and
//! looks for drift at once instead of at its next scheduled pass, as Karpenter's controllers
//! react to the change. Status, metadata and dry-run writes wake nothing, so Kerf's own status
//! writes never wake it again. A static NodePool created or whose `replicas` changed also
//! wakes the provisioner (a hint), which launches what the pool is short of at once. The
//! messages only wake; a lost one costs latency.

use jiff::Timestamp;

use super::Request;
use super::validate::Kind;
use crate::ctx::Ctx;
use crate::log::controllers::WEBHOOK;
use crate::log::obj;
use crate::ports::hint::Hint;
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

/// Whether `req` creates a static NodePool or changes its `replicas`.
pub fn replicas_changed(kind: Kind, req: &Request) -> bool {
    let replicas = |o: &serde_json::Value| o.get("spec").and_then(|s| s.get("replicas")).cloned();
    kind == Kind::NodePool
        && wakes(kind, req)
        && replicas(&req.object).is_some()
        && req.old_object.as_ref().map(replicas) != Some(replicas(&req.object))
}

/// Wakes the disruption function when [`wakes`] says so, and the provisioner when
/// [`replicas_changed`] does.
pub async fn changed<C: Cluster, K: Cloud, P: Publisher, Q: Queue>(
    ctx: &Ctx<C, K, P>,
    provisioner: &Q,
    disruption: &Q,
    kind: Kind,
    req: &Request,
) {
    if !wakes(kind, req) {
        return;
    }
    let now: Timestamp = ctx.now();
    if ctx.settings.static_capacity
        && replicas_changed(kind, req)
        && let Err(e) = provisioner.send(&Hint::new(&[], now).body(), 0).await
    {
        ctx.log.warn(
            WEBHOOK,
            "could not wake the provisioner for a static nodepool",
            serde_json::json!({"NodePool": obj(&req.name), "error": e.to_string()}),
        );
    }
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

    #[test]
    fn a_static_pool_created_or_rescaled_wakes_the_provisioner_too() {
        let mut create = req("CREATE", None);
        assert!(!replicas_changed(Kind::NodePool, &create), "not static");
        create.object = json!({"spec": {"replicas": 3}});
        assert!(replicas_changed(Kind::NodePool, &create));
        let mut rescaled = req("UPDATE", Some(json!({"spec": {"replicas": 3}})));
        rescaled.object = json!({"spec": {"replicas": 5}});
        assert!(replicas_changed(Kind::NodePool, &rescaled));
        let mut other = req(
            "UPDATE",
            Some(json!({"spec": {"replicas": 3, "weight": 1}})),
        );
        other.object = json!({"spec": {"replicas": 3}});
        assert!(
            !replicas_changed(Kind::NodePool, &other),
            "replicas unchanged"
        );
        assert!(!replicas_changed(Kind::EC2NodeClass, &create));
    }
}
