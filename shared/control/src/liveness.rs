//! Liveness: a NodeClaim that is not launched within the launch timeout (5 minutes), or
//! launched but not registered within the registration timeout (15 minutes), is deleted and
//! its instance terminated, as Karpenter does. Times come from the claim (creation, the
//! `Launched` transition), so every invocation reaches the same verdict.

use jiff::Timestamp;
use kerf_api::v1::NodeClaim;
use serde_json::json;

use crate::claim;
use crate::ctx::{Ctx, Settings};
use crate::finalize;
use crate::log::{controllers::LIFECYCLE, obj};
use crate::names::conditions;
use crate::ports::{Cloud, Cluster, Publisher};
use crate::view::View;

/// Why a claim is past its time, if it is.
pub fn expired(c: &NodeClaim, now: Timestamp, s: &Settings) -> Option<&'static str> {
    if c.metadata.deletion_timestamp.is_some() {
        return None;
    }
    if !claim::is_true(c, conditions::LAUNCHED) {
        let created = c.metadata.creation_timestamp.as_ref()?.0;
        return (now.duration_since(created) >= s.launch_timeout).then_some("launch_timeout");
    }
    if !claim::is_true(c, conditions::REGISTERED) {
        let launched = claim::transition_time(c, conditions::LAUNCHED)?;
        return (now.duration_since(launched) >= s.registration_timeout)
            .then_some("registration_timeout");
    }
    None
}

/// Deletes every claim of the view that is past its time. Returns how many.
pub async fn enforce<C: Cluster, K: Cloud, P: Publisher>(ctx: &Ctx<C, K, P>, view: &View) -> usize {
    let now = ctx.now();
    let mut done = 0;
    for c in &view.snap.node_claims {
        let Some(reason) = expired(c, now, &ctx.settings) else {
            continue;
        };
        let ttl = match reason {
            "launch_timeout" => ctx.settings.launch_timeout,
            _ => ctx.settings.registration_timeout,
        };
        ctx.log.info(
            LIFECYCLE,
            "terminating due to registration ttl",
            json!({"NodeClaim": obj(claim::name(c)), "reason": reason, "ttl": format!("{ttl:#}")}),
        );
        match finalize::delete_claim(ctx, c, None, "liveness").await {
            Ok(()) => done += 1,
            Err(e) => ctx.log.warn(
                LIFECYCLE,
                "could not delete nodeclaim",
                json!({"NodeClaim": obj(claim::name(c)), "error": e.to_string()}),
            ),
        }
    }
    done
}

#[cfg(test)]
mod tests {
    use super::*;
    use jiff::SignedDuration;

    fn claim(launched_at: Option<&str>, registered: bool) -> NodeClaim {
        let mut conds = vec![];
        if let Some(t) = launched_at {
            conds.push(json!({"type": "Launched", "status": "True", "lastTransitionTime": t, "reason": "Launched", "message": ""}));
        }
        if registered {
            conds.push(json!({"type": "Registered", "status": "True", "lastTransitionTime": "2026-01-01T00:00:00Z", "reason": "Registered", "message": ""}));
        }
        serde_json::from_value(json!({"apiVersion": "karpenter.sh/v1", "kind": "NodeClaim",
            "metadata": {"name": "c", "creationTimestamp": "2026-01-01T00:00:00Z"},
            "spec": {"requirements": [], "nodeClassRef": {"group": "g", "kind": "k", "name": "n"}},
            "status": {"conditions": conds}}))
        .unwrap()
    }

    #[test]
    fn launch_and_registration_timeouts() {
        let s = Settings::new("demo", "kerf");
        let t0: Timestamp = "2026-01-01T00:00:00Z".parse().unwrap();
        let at = |m: i64| t0 + SignedDuration::from_mins(m);
        assert_eq!(expired(&claim(None, false), at(4), &s), None);
        assert_eq!(
            expired(&claim(None, false), at(5), &s),
            Some("launch_timeout")
        );
        let launched = claim(Some("2026-01-01T00:01:00Z"), false);
        assert_eq!(expired(&launched, at(15), &s), None);
        assert_eq!(expired(&launched, at(16), &s), Some("registration_timeout"));
        assert_eq!(
            expired(&claim(Some("2026-01-01T00:01:00Z"), true), at(600), &s),
            None
        );
    }
}
