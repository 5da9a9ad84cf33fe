//! Instance health for Karpenter's instance-status poller: three paginated
//! DescribeInstanceStatus calls (filters are ANDed, so one per signal) for an impaired
//! instance status, an impaired system status and a scheduled reboot, maintenance, retirement
//! or stop, merged. Each response is checked again here: only failed check details count
//! (with the time they started failing), and events already completed or canceled do not.

use aws_sdk_ec2::types::{Filter, InstanceStatus, InstanceStatusSummary};
use jiff::Timestamp;
use kerf_control::ports::{HealthCategory, Unhealthy};

use crate::error::{AwsError, from_sdk};

/// The scheduled-event codes that make an instance unhealthy.
pub const EVENT_CODES: &[&str] = &[
    "instance-reboot",
    "system-reboot",
    "system-maintenance",
    "instance-retirement",
    "instance-stop",
];

/// Every bad health signal of the account's instances, one per (instance, category).
pub async fn unhealthy(ec2: &aws_sdk_ec2::Client) -> Result<Vec<Unhealthy>, AwsError> {
    let queries: [(&str, &[&str]); 3] = [
        ("instance-status.status", &["impaired"]),
        ("system-status.status", &["impaired"]),
        ("event.code", EVENT_CODES),
    ];
    let mut out = Vec::new();
    for (name, values) in queries {
        let filter = Filter::builder()
            .name(name)
            .set_values(Some(values.iter().map(|v| v.to_string()).collect()))
            .build();
        let mut pages = ec2
            .describe_instance_status()
            .filters(filter)
            .into_paginator()
            .send();
        while let Some(page) = pages.next().await {
            let page = page.map_err(|e| from_sdk("DescribeInstanceStatus", e))?;
            out.extend(page.instance_statuses().iter().flat_map(signals));
        }
    }
    out.sort_by(|a, b| (&a.instance_id, a.category).cmp(&(&b.instance_id, b.category)));
    out.dedup_by(|a, b| a.instance_id == b.instance_id && a.category == b.category);
    Ok(out)
}

/// The bad signals of one instance's status.
pub fn signals(s: &InstanceStatus) -> Vec<Unhealthy> {
    let Some(id) = s.instance_id() else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let checks = [
        (HealthCategory::InstanceStatus, s.instance_status()),
        (HealthCategory::SystemStatus, s.system_status()),
    ];
    for (category, summary) in checks {
        if let Some(since) = failing_since(summary) {
            out.push(Unhealthy {
                instance_id: id.to_string(),
                category,
                since,
            });
        }
    }
    let scheduled = s.events().iter().any(|e| {
        let code = e.code().map(|c| c.as_str()).unwrap_or_default();
        let done = e
            .description()
            .is_some_and(|d| d.starts_with("[Completed]") || d.starts_with("[Canceled]"));
        EVENT_CODES.contains(&code) && !done
    });
    if scheduled {
        out.push(Unhealthy {
            instance_id: id.to_string(),
            category: HealthCategory::EventStatus,
            since: None,
        });
    }
    out
}

/// `Some(since)` when a check detail failed: the earliest start among failed details (`None`
/// inside when EC2 gave none).
fn failing_since(summary: Option<&InstanceStatusSummary>) -> Option<Option<Timestamp>> {
    let failed: Vec<Option<Timestamp>> = summary?
        .details()
        .iter()
        .filter(|d| d.status().is_some_and(|s| s.as_str() == "failed"))
        .map(|d| {
            d.impaired_since()
                .and_then(|t| Timestamp::from_second(t.secs()).ok())
        })
        .collect();
    if failed.is_empty() {
        return None;
    }
    Some(failed.iter().flatten().min().copied())
}
