//! Liveness: a NodeClaim that is not launched within the launch timeout (5 minutes), or
//! launched but not registered within the registration timeout (15 minutes), is deleted and
//! its instance terminated, as Karpenter does. Times come from the claim (creation, the
//! `Launched` transition), so every invocation reaches the same verdict.
//!
//! A deadline that falls within [`HORIZON`] of a pass gets a timer on the provisioner's
//! queue, so the claim goes at its moment rather than at the next sweep. A healthy claim
//! registers long before its deadline comes that close, so it costs no timer and no write;
//! the moment armed is recorded on the claim ([`ARMED`]) so later passes do not send it again.

use std::collections::BTreeMap;

use jiff::{SignedDuration, Timestamp};
use kerf_api::v1::NodeClaim;
use serde_json::json;

use crate::claim;
use crate::ctx::{Ctx, Settings};
use crate::finalize;
use crate::log::controllers::LIFECYCLE;
use crate::log::obj;
use crate::names::conditions;
use crate::ports::{Cloud, Cluster, Publisher, Queue, TimerKind};
use crate::timers::set_timer;
use crate::view::View;

/// Annotation: the liveness deadline a timer was armed for.
pub const ARMED: &str = "kerf.dev/liveness-timer";
/// How far ahead a pass arms deadlines: at least the schedule's period (one minute by
/// default), so some pass arms every deadline before it falls.
pub const HORIZON: SignedDuration = SignedDuration::from_mins(2);

/// Which timeout a claim runs out of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Timeout {
    /// Not launched within the launch timeout.
    Launch,
    /// Launched, not registered within the registration timeout.
    Registration,
}

impl Timeout {
    /// The reason logged and published (Karpenter's words).
    pub fn as_str(self) -> &'static str {
        match self {
            Timeout::Launch => "launch_timeout",
            Timeout::Registration => "registration_timeout",
        }
    }

    fn ttl(self, s: &Settings) -> SignedDuration {
        match self {
            Timeout::Launch => s.launch_timeout,
            Timeout::Registration => s.registration_timeout,
        }
    }
}

/// The moment a live claim runs out of its current timeout, and which one; `None` once it
/// is registered or being deleted.
pub fn deadline(c: &NodeClaim, s: &Settings) -> Option<(Timeout, Timestamp)> {
    if c.metadata.deletion_timestamp.is_some() {
        return None;
    }
    let (t, since) = if !claim::is_true(c, conditions::LAUNCHED) {
        (Timeout::Launch, c.metadata.creation_timestamp.as_ref()?.0)
    } else if !claim::is_true(c, conditions::REGISTERED) {
        (
            Timeout::Registration,
            claim::transition_time(c, conditions::LAUNCHED)?,
        )
    } else {
        return None;
    };
    Some((t, since + t.ttl(s)))
}

/// Which timeout a claim is past at `now`, if any.
pub fn expired(c: &NodeClaim, now: Timestamp, s: &Settings) -> Option<Timeout> {
    deadline(c, s).and_then(|(t, at)| (now >= at).then_some(t))
}

/// Deletes every claim of the view that is past its time. Returns how many.
pub async fn enforce<C: Cluster, K: Cloud, P: Publisher>(ctx: &Ctx<C, K, P>, view: &View) -> usize {
    let now = ctx.now();
    let mut done = 0;
    for c in &view.snap.node_claims {
        let Some(timeout) = expired(c, now, &ctx.settings) else {
            continue;
        };
        let ttl = timeout.ttl(&ctx.settings);
        ctx.log.info(
            LIFECYCLE,
            "terminating due to registration ttl",
            json!({"NodeClaim": obj(claim::name(c)), "reason": timeout.as_str(), "ttl": format!("{ttl:#}")}),
        );
        match finalize::delete_claim(ctx, c, None, finalize::Deletion::Liveness).await {
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

/// Arms one timer per deadline within [`HORIZON`] that no earlier pass armed; how many.
pub async fn arm<C: Cluster, K: Cloud, P: Publisher, Q: Queue>(
    ctx: &Ctx<C, K, P>,
    queue: &Q,
    view: &View,
) -> usize {
    let now = ctx.now();
    let mut by_moment: BTreeMap<Timestamp, Vec<String>> = BTreeMap::new();
    for c in &view.snap.node_claims {
        let Some((_, at)) = deadline(c, &ctx.settings) else {
            continue;
        };
        let armed = c.metadata.annotations.as_ref().and_then(|a| a.get(ARMED));
        if at > now && at <= now + HORIZON && armed != Some(&claim::rfc3339(at)) {
            by_moment
                .entry(at)
                .or_default()
                .push(claim::name(c).to_string());
        }
    }
    let mut n = 0;
    for (at, names) in by_moment {
        if !set_timer(ctx, queue, LIFECYCLE, TimerKind::Liveness, at, &names).await {
            continue;
        }
        n += 1;
        let a = BTreeMap::from([(ARMED.to_string(), claim::rfc3339(at))]);
        for name in &names {
            // A failed record costs one more timer on the next pass, never a missed one.
            if let Err(e) = ctx.cluster.annotate_node_claim(name, &a).await {
                ctx.log.debug(
                    LIFECYCLE,
                    "could not record the armed timer",
                    json!({"NodeClaim": obj(name), "error": e.to_string()}),
                );
            }
        }
    }
    n
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
            Some(Timeout::Launch)
        );
        let launched = claim(Some("2026-01-01T00:01:00Z"), false);
        assert_eq!(expired(&launched, at(15), &s), None);
        assert_eq!(expired(&launched, at(16), &s), Some(Timeout::Registration));
        assert_eq!(
            expired(&claim(Some("2026-01-01T00:01:00Z"), true), at(600), &s),
            None
        );
    }
}
