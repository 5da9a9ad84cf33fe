//! Karpenter's instance-status poller, run by the disruption function's minute sweep: the
//! account's instances with a failed instance or system status check (failing for at least
//! [`UNHEALTHY_THRESHOLD`]) or a scheduled reboot, maintenance, retirement or stop are
//! handled as interruptions of their NodeClaims. A failed check terminates forcefully (the
//! drain does not wait for PDBs: the instance is already broken); a scheduled event drains
//! as usual. Both launch replacements first. Instances Kerf does not manage are ignored.

use jiff::SignedDuration;
use serde_json::json;

use super::act::{BatchReport, InterruptOptions, act};
use super::events::Interruption;
use crate::ctx::Ctx;
use crate::log::controllers::INTERRUPTION;
use crate::ports::{Cloud, CloudError, Cluster, HealthCategory, Publisher, Queue, Unhealthy};

/// How long a status check must have been failing before Kerf acts (Karpenter's
/// `UnhealthyThreshold`).
pub const UNHEALTHY_THRESHOLD: SignedDuration = SignedDuration::from_secs(120);

/// Polls instance health and acts on what is bad; never fails the caller (a poll that fails
/// is logged and tried again next minute).
pub async fn poll<C: Cluster, K: Cloud, P: Publisher, Q: Queue>(
    ctx: &Ctx<C, K, P>,
    termination: &Q,
    opts: &InterruptOptions,
) -> BatchReport {
    let mut report = BatchReport::default();
    let found = match ctx.cloud.unhealthy().await {
        Ok(found) => found,
        Err(e) => {
            let message = match e {
                CloudError::Unauthorized(_) => "not allowed to describe instance status",
                _ => "failed polling instance status",
            };
            ctx.log
                .warn(INTERRUPTION, message, json!({"error": e.to_string()}));
            return report;
        }
    };
    let work = due(&found, ctx.now());
    if work.is_empty() {
        return report;
    }
    let refs: Vec<(&str, Interruption)> = work
        .iter()
        .map(|(id, i)| (id.as_str(), i.clone()))
        .collect();
    if let Err(e) = act(ctx, termination, &refs, opts, &mut report).await {
        ctx.log.warn(
            INTERRUPTION,
            "failed handling unhealthy instances",
            json!({"error": e.to_string()}),
        );
    }
    report
}

/// The signals to act on now, one per instance (a failed check before a scheduled event),
/// each with an id naming the instance and the category.
pub fn due(found: &[Unhealthy], now: jiff::Timestamp) -> Vec<(String, Interruption)> {
    let mut due: Vec<&Unhealthy> = found
        .iter()
        .filter(|u| {
            u.category == HealthCategory::EventStatus
                || u.since
                    .is_none_or(|s| now.duration_since(s) >= UNHEALTHY_THRESHOLD)
        })
        .collect();
    due.sort_by(|a, b| (&a.instance_id, a.category).cmp(&(&b.instance_id, b.category)));
    due.dedup_by(|a, b| a.instance_id == b.instance_id);
    due.into_iter()
        .map(|u| {
            let id = format!("{}/{}", u.instance_id, u.category.kind());
            let i = Interruption::InstanceUnhealthy {
                instance_id: u.instance_id.clone(),
                category: u.category,
            };
            (id, i)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn u(id: &str, category: HealthCategory, since: Option<&str>) -> Unhealthy {
        Unhealthy {
            instance_id: id.into(),
            category,
            since: since.map(|s| s.parse().unwrap()),
        }
    }

    #[test]
    fn checks_count_after_two_minutes_events_at_once_one_per_instance() {
        let now = "2026-01-01T10:05:00Z".parse().unwrap();
        let found = [
            u(
                "i-a",
                HealthCategory::InstanceStatus,
                Some("2026-01-01T10:03:00Z"),
            ),
            u(
                "i-b",
                HealthCategory::SystemStatus,
                Some("2026-01-01T10:04:00Z"),
            ),
            u("i-c", HealthCategory::EventStatus, None),
            u("i-d", HealthCategory::EventStatus, None),
            u("i-d", HealthCategory::SystemStatus, None),
        ];
        let ids: Vec<String> = due(&found, now).into_iter().map(|(id, _)| id).collect();
        assert_eq!(
            ids,
            [
                "i-a/instance_status",
                "i-c/event_status",
                "i-d/system_status"
            ],
            "i-b has failed for one minute only; i-d's failed check (no start given, so it \
             counts) wins over its event"
        );
    }
}
