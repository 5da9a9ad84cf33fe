//! Metrics in CloudWatch Embedded Metric Format, under Karpenter's metric names.
//!
//! A reconciler counts and observes into [`Metrics`] while it runs; the function flushes it
//! once per invocation as EMF documents (one JSON line per distinct set of dimension values),
//! which CloudWatch turns into metrics without any API call.

use std::collections::BTreeMap;
use std::sync::Mutex;

use jiff::Timestamp;
use serde_json::{Map, Value, json};

/// The CloudWatch namespace of every Kerf metric.
pub const NAMESPACE: &str = "Kerf";

/// Karpenter's metric names.
pub mod names {
    pub const NODECLAIMS_CREATED: &str = "karpenter_nodeclaims_created_total";
    pub const NODECLAIMS_LAUNCHED: &str = "karpenter_nodeclaims_launched_total";
    pub const NODECLAIMS_REGISTERED: &str = "karpenter_nodeclaims_registered_total";
    pub const NODECLAIMS_INITIALIZED: &str = "karpenter_nodeclaims_initialized_total";
    pub const NODECLAIMS_TERMINATED: &str = "karpenter_nodeclaims_terminated_total";
    pub const SCHEDULING_DURATION: &str = "karpenter_provisioner_scheduling_duration_seconds";
    pub const PODS_STARTUP_DURATION: &str = "karpenter_pods_startup_duration_seconds";
    pub const LAUNCH_FAILURES: &str = "karpenter_cloudprovider_instance_launch_failures_total";
    pub const PODS_UNSCHEDULABLE: &str = "karpenter_scheduler_unschedulable_pods_count";
    pub const PODS_DRAINED: &str = "karpenter_pods_drained_total";
    pub const NODECLAIMS_DISRUPTED: &str = "karpenter_nodeclaims_disrupted_total";
    pub const NODECLAIMS_UNHEALTHY_DISRUPTED: &str =
        "karpenter_nodeclaims_unhealthy_disrupted_total";
    pub const DISRUPTION_DECISIONS: &str = "karpenter_voluntary_disruption_decisions_total";
    pub const ALLOWED_DISRUPTIONS: &str = "karpenter_nodepools_allowed_disruptions";
    pub const FAILED_VALIDATIONS: &str = "karpenter_voluntary_disruption_failed_validations_total";
    /// Timer messages sent, by kind (Kerf's own: Karpenter keeps its timers in memory).
    pub const TIMERS_SENT: &str = "kerf_timers_sent_total";
    /// Hourly price of each NodePool's live NodeClaims (Kerf's own: no Karpenter metric says it).
    pub const NODEPOOL_COST_PER_HOUR: &str = "kerf_nodepool_cost_per_hour";
    /// Each dollar-limited NodePool's `kerf.dev/max-cost-per-hour` (Kerf's own), charted
    /// beside its cost.
    pub const NODEPOOL_MAX_COST_PER_HOUR: &str = "kerf_nodepool_max_cost_per_hour";
    pub const INTERRUPTION_RECEIVED: &str = "karpenter_interruption_received_messages_total";
    pub const INTERRUPTION_DELETED: &str = "karpenter_interruption_deleted_messages_total";
    pub const INTERRUPTION_QUEUE_DURATION: &str =
        "karpenter_interruption_message_queue_duration_seconds";
    pub const INSTANCE_STATUS_UNHEALTHY: &str =
        "karpenter_interruption_instance_status_unhealthy_total";
    /// Webhook requests refused for a wrong or missing path secret (Kerf's own: the alarm on
    /// its rate says someone is guessing, or a configuration carries a retired secret).
    pub const WEBHOOK_UNAUTHORIZED: &str = "kerf_webhook_unauthorized_total";
}

/// EMF units.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    Count,
    Seconds,
}

impl Unit {
    fn as_str(self) -> &'static str {
        match self {
            Unit::Count => "Count",
            Unit::Seconds => "Seconds",
        }
    }
}

type Dims = BTreeMap<String, String>;

#[derive(Debug, Default)]
struct Series {
    unit: Option<Unit>,
    /// Counters keep one summed value; observations keep every value.
    sum: f64,
    values: Vec<f64>,
}

/// The metrics of one invocation.
#[derive(Debug, Default)]
pub struct Metrics {
    series: Mutex<BTreeMap<(Dims, &'static str), Series>>,
}

fn dims(d: &[(&str, &str)]) -> Dims {
    d.iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// EMF accepts at most 100 values per metric per document.
const MAX_VALUES: usize = 100;

impl Metrics {
    /// Adds `n` to a counter.
    pub fn count(&self, name: &'static str, d: &[(&str, &str)], n: f64) {
        if let Ok(mut s) = self.series.lock() {
            let e = s.entry((dims(d), name)).or_default();
            e.unit = Some(Unit::Count);
            e.sum += n;
        }
    }

    /// Records one observation of a duration in seconds (a histogram).
    pub fn observe(&self, name: &'static str, d: &[(&str, &str)], seconds: f64) {
        if let Ok(mut s) = self.series.lock() {
            let e = s.entry((dims(d), name)).or_default();
            e.unit = Some(Unit::Seconds);
            e.values.push(seconds);
        }
    }

    /// The sum of a counter (all dimension values), for tests and reports.
    pub fn total(&self, name: &str) -> f64 {
        self.series
            .lock()
            .map(|s| {
                s.iter()
                    .filter(|((_, n), _)| *n == name)
                    .map(|(_, v)| v.sum + v.values.iter().sum::<f64>())
                    .sum()
            })
            .unwrap_or(0.0)
    }

    /// Takes everything recorded so far as EMF documents stamped `now`.
    pub fn flush(&self, now: Timestamp) -> Vec<Value> {
        let taken = match self.series.lock() {
            Ok(mut s) => std::mem::take(&mut *s),
            Err(_) => return Vec::new(),
        };
        let mut by_dims: BTreeMap<Dims, Vec<(&'static str, Series)>> = BTreeMap::new();
        for ((d, name), s) in taken {
            by_dims.entry(d).or_default().push((name, s));
        }
        by_dims
            .into_iter()
            .map(|(d, series)| document(now, &d, series))
            .collect()
    }
}

fn document(now: Timestamp, d: &Dims, series: Vec<(&'static str, Series)>) -> Value {
    let mut body = Map::new();
    let mut defs = Vec::new();
    for (k, v) in d {
        body.insert(k.clone(), json!(v));
    }
    for (name, s) in series {
        let unit = s.unit.unwrap_or(Unit::Count);
        defs.push(json!({"Name": name, "Unit": unit.as_str()}));
        let value = match unit {
            Unit::Count => json!(s.sum),
            Unit::Seconds => {
                let mut v = s.values;
                v.truncate(MAX_VALUES);
                json!(v)
            }
        };
        body.insert(name.to_string(), value);
    }
    let keys: Vec<&String> = d.keys().collect();
    body.insert(
        "_aws".into(),
        json!({
            "Timestamp": now.as_millisecond(),
            "CloudWatchMetrics": [{"Namespace": NAMESPACE, "Dimensions": [keys], "Metrics": defs}],
        }),
    );
    Value::Object(body)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counters_sum_and_histograms_keep_values_per_dimension_set() {
        let m = Metrics::default();
        m.count(names::NODECLAIMS_CREATED, &[("nodepool", "default")], 1.0);
        m.count(names::NODECLAIMS_CREATED, &[("nodepool", "default")], 2.0);
        m.count(names::NODECLAIMS_CREATED, &[("nodepool", "gpu")], 1.0);
        m.observe(names::SCHEDULING_DURATION, &[], 0.25);
        m.observe(names::SCHEDULING_DURATION, &[], 0.5);
        assert_eq!(m.total(names::NODECLAIMS_CREATED), 4.0);
        let now: Timestamp = "2026-01-01T00:00:00Z".parse().unwrap();
        let docs = m.flush(now);
        assert_eq!(docs.len(), 3);
        let default = docs.iter().find(|d| d["nodepool"] == "default").unwrap();
        assert_eq!(default[names::NODECLAIMS_CREATED], 3.0);
        let aws = &default["_aws"];
        assert_eq!(aws["Timestamp"], now.as_millisecond());
        assert_eq!(aws["CloudWatchMetrics"][0]["Namespace"], "Kerf");
        assert_eq!(
            aws["CloudWatchMetrics"][0]["Dimensions"],
            json!([["nodepool"]])
        );
        let hist = docs.iter().find(|d| d.get("nodepool").is_none()).unwrap();
        assert_eq!(hist[names::SCHEDULING_DURATION], json!([0.25, 0.5]));
        assert_eq!(
            hist["_aws"]["CloudWatchMetrics"][0]["Metrics"][0]["Unit"],
            "Seconds"
        );
        assert!(m.flush(now).is_empty(), "flush takes the values");
    }
}
