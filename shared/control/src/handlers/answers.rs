//! What the provisioner and the disruption function answer besides a batch's failures: the
//! schedule's and a pass's summaries, a busy Lease, a failed sweep. Each struct declares its
//! keys in alphabetical order, the order serde_json gave these answers when they were built
//! as JSON values, so the bytes Lambda returns stay what they were.

use serde::Serialize;

use super::events::SqsBatchResponse;
use super::provisioner::PassReport;
use crate::disrupt::SweepReport;

/// An answer's `status`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Ok,
    Busy,
    Failed,
}

/// `{"error": "…", "status": "failed"}`: a sweep that failed.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Failure {
    pub error: String,
    pub status: Status,
}

impl Failure {
    /// The failure of a sweep, with its error's message.
    pub fn new(error: impl Into<String>) -> Self {
        Failure {
            error: error.into(),
            status: Status::Failed,
        }
    }
}

/// `{"status": "busy"}`: another decision held the Lease.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Busy {
    pub status: Status,
}

impl Default for Busy {
    fn default() -> Self {
        Busy {
            status: Status::Busy,
        }
    }
}

/// The provisioner's sweep ([`PassReport`]): what it created, launched, registered,
/// initialized, expired, armed and collected.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SweepSummary {
    pub armed: usize,
    pub collected_instances: Vec<String>,
    pub collected_launch_templates: Vec<String>,
    pub collected_node_claims: Vec<String>,
    pub created: Vec<String>,
    pub expired: usize,
    pub initialized: usize,
    pub launched: Vec<String>,
    pub registered: usize,
    /// `busy` when another holder had the Lease, `ok` otherwise.
    pub status: Status,
    pub unschedulable: usize,
}

impl SweepSummary {
    /// The summary of a sweep's report.
    pub fn of(r: &PassReport) -> Self {
        SweepSummary {
            armed: r.armed,
            collected_instances: r.collected.instances.clone(),
            collected_launch_templates: r.collected.launch_templates.clone(),
            collected_node_claims: r.collected.node_claims.clone(),
            created: r.provision.created.clone(),
            expired: r.expired,
            initialized: r.initialized,
            launched: r.provision.launched.clone(),
            registered: r.registered,
            status: if r.busy.is_some() {
                Status::Busy
            } else {
                Status::Ok
            },
            unschedulable: r.provision.unschedulable.len(),
        }
    }
}

/// A disruption pass ([`SweepReport`]); a timer batch's carries the batch's (empty)
/// failures, the schedule's the instances health checks terminated.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PassSummary {
    pub armed: usize,
    #[serde(flatten)]
    pub batch: Option<SqsBatchResponse>,
    pub drifted: usize,
    pub finished: Vec<String>,
    pub recorded: Vec<String>,
    pub rejected: Vec<String>,
    pub rolled_back: Vec<String>,
    pub skipped: usize,
    pub started: Vec<String>,
    pub status: Status,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unhealthy: Option<Vec<String>>,
}

impl PassSummary {
    /// The summary of a pass's report (no batch failures, no health results yet).
    pub fn of(r: &SweepReport) -> Self {
        PassSummary {
            armed: r.armed,
            batch: None,
            drifted: r.drifted.len(),
            finished: r.progress.finished.clone(),
            recorded: r.recorded.clone(),
            rejected: r.rejected.clone(),
            rolled_back: r.progress.rolled_back.clone(),
            skipped: r.skipped,
            started: r.started.clone(),
            status: Status::Ok,
            unhealthy: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;
    use crate::handlers::events::batch_failures;

    /// The bytes of `typed` and of the JSON value the handler built before.
    fn same_bytes<T: Serialize>(typed: &T, before: &Value) {
        assert_eq!(serde_json::to_string(typed).unwrap(), before.to_string());
    }

    fn names(n: &str) -> Vec<String> {
        vec![format!("{n}-1"), format!("{n}-2")]
    }

    #[test]
    fn the_provisioner_summary_is_the_json_it_was() {
        let mut r = PassReport {
            registered: 1,
            initialized: 2,
            expired: 3,
            armed: 4,
            ..PassReport::default()
        };
        r.provision.created = names("c");
        r.provision.launched = names("l");
        r.collected.instances = names("i");
        r.collected.node_claims = names("n");
        r.collected.launch_templates = names("t");
        let before = |status: &str| {
            json!({"status": status, "created": r.provision.created,
                "launched": r.provision.launched, "unschedulable": 0, "registered": 1,
                "initialized": 2, "expired": 3, "armed": 4,
                "collectedInstances": r.collected.instances,
                "collectedNodeClaims": r.collected.node_claims,
                "collectedLaunchTemplates": r.collected.launch_templates})
        };
        same_bytes(&SweepSummary::of(&r), &before("ok"));
        r.busy = Some("other".into());
        same_bytes(&SweepSummary::of(&r), &before("busy"));
        same_bytes(
            &Failure::new("boom"),
            &json!({"status": "failed", "error": "boom"}),
        );
        same_bytes(&Busy::default(), &json!({"status": "busy"}));
    }

    #[test]
    fn the_disruption_summaries_are_the_json_they_were() {
        let mut r = SweepReport {
            started: names("s"),
            recorded: names("r"),
            rejected: names("x"),
            drifted: names("d"),
            skipped: 5,
            armed: 6,
            ..SweepReport::default()
        };
        r.progress.finished = names("f");
        r.progress.rolled_back = names("b");
        let before = json!({"status": "ok", "started": r.started, "recorded": r.recorded,
            "rejected": r.rejected, "finished": r.progress.finished,
            "rolledBack": r.progress.rolled_back, "drifted": 2, "skipped": 5, "armed": 6});
        let mut timers = before.clone();
        timers["batchItemFailures"] = json!([]);
        same_bytes(
            &PassSummary {
                batch: Some(batch_failures(&[])),
                ..PassSummary::of(&r)
            },
            &timers,
        );
        let mut scheduled = before;
        scheduled["unhealthy"] = json!(["i-1"]);
        same_bytes(
            &PassSummary {
                unhealthy: Some(vec!["i-1".into()]),
                ..PassSummary::of(&r)
            },
            &scheduled,
        );
    }
}
