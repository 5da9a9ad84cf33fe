//! Assertions on an [`Observation`]: counts, cost per hour, events seen, instance types.

use std::collections::BTreeMap;

use serde::Deserialize;

use super::Observation;

/// An exact count or a range.
#[derive(Debug, Clone, Copy, Deserialize, PartialEq)]
#[serde(untagged)]
pub enum Count {
    Exactly(usize),
    Range {
        min: Option<usize>,
        max: Option<usize>,
    },
}

impl Count {
    fn holds(&self, n: usize) -> bool {
        match *self {
            Count::Exactly(want) => n == want,
            Count::Range { min, max } => min.is_none_or(|m| n >= m) && max.is_none_or(|m| n <= m),
        }
    }
}

impl std::fmt::Display for Count {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match *self {
            Count::Exactly(n) => write!(f, "{n}"),
            Count::Range { min, max } => match (min, max) {
                (Some(a), Some(b)) => write!(f, "between {a} and {b}"),
                (Some(a), None) => write!(f, "at least {a}"),
                (None, Some(b)) => write!(f, "at most {b}"),
                (None, None) => write!(f, "any number"),
            },
        }
    }
}

/// A USD-per-hour range.
#[derive(Debug, Clone, Copy, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Money {
    pub min: Option<f64>,
    pub max: Option<f64>,
}

impl std::fmt::Display for Money {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match (self.min, self.max) {
            (Some(a), Some(b)) => write!(f, "between ${a:.4} and ${b:.4}"),
            (Some(a), None) => write!(f, "at least ${a:.4}"),
            (None, Some(b)) => write!(f, "at most ${b:.4}"),
            (None, None) => write!(f, "anything"),
        }
    }
}

/// What must hold; every field given is checked.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Expect {
    /// NodeClaims that are not being deleted.
    pub nodes: Option<Count>,
    /// Pods not bound to a node.
    pub pending: Option<Count>,
    /// Pods running.
    pub running: Option<Count>,
    /// Cost per hour of the nodes (USD).
    pub cost_per_hour: Option<Money>,
    /// Kubernetes Event reasons seen since the start (`DisruptionTerminating`, …).
    #[serde(default)]
    pub events: Vec<String>,
    /// Every node's instance type is one of these.
    pub instance_types: Option<Vec<String>>,
    /// Nodes per capacity type (`spot`, `on-demand`).
    pub capacity_types: Option<BTreeMap<String, Count>>,
    /// Nodes per NodePool.
    pub node_pools: Option<BTreeMap<String, Count>>,
    /// NodeClaims launched since the start.
    pub launched: Option<Count>,
    /// Interruption messages handled since the start.
    pub interruptions: Option<Count>,
}

/// An assertion that did not hold.
#[derive(Debug, Clone, Default, PartialEq, thiserror::Error)]
#[error("expected {what} {want}, found {found}{}", lines(.why))]
pub struct Failure {
    pub what: String,
    pub want: String,
    pub found: String,
    /// Why, as far as the cluster tells: pending pods' reasons, NodePools not ready.
    pub why: Vec<String>,
}

/// The conditions as the timeline shows the step, in the scenario's own keys:
/// `running=5, pending=0`.
impl std::fmt::Display for Expect {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut parts = Vec::new();
        let counts = [
            ("nodes", &self.nodes),
            ("pending", &self.pending),
            ("running", &self.running),
            ("launched", &self.launched),
            ("interruptions", &self.interruptions),
        ];
        for (key, c) in counts {
            if let Some(c) = c {
                parts.push(condition(key, c));
            }
        }
        if let Some(m) = &self.cost_per_hour {
            parts.push(match (m.min, m.max) {
                (Some(a), Some(b)) => format!("costPerHour=${a:.4}..${b:.4}"),
                (Some(a), None) => format!("costPerHour>=${a:.4}"),
                (None, Some(b)) => format!("costPerHour<=${b:.4}"),
                (None, None) => "costPerHour=any".into(),
            });
        }
        if !self.events.is_empty() {
            parts.push(format!("events=[{}]", self.events.join(",")));
        }
        if let Some(types) = &self.instance_types {
            parts.push(format!("instanceTypes=[{}]", types.join(",")));
        }
        let grouped = [
            ("capacityTypes", &self.capacity_types),
            ("nodePools", &self.node_pools),
        ];
        for (key, g) in grouped {
            parts.extend(
                g.iter()
                    .flatten()
                    .map(|(k, c)| condition(&format!("{key}.{k}"), c)),
            );
        }
        if parts.is_empty() {
            return write!(f, "nothing");
        }
        write!(f, "{}", parts.join(", "))
    }
}

/// `key=3`, `key>=3`, `key<=3` or `key=1..3`.
fn condition(key: &str, c: &Count) -> String {
    match *c {
        Count::Exactly(n) => format!("{key}={n}"),
        Count::Range { min, max } => match (min, max) {
            (Some(a), Some(b)) => format!("{key}={a}..{b}"),
            (Some(a), None) => format!("{key}>={a}"),
            (None, Some(b)) => format!("{key}<={b}"),
            (None, None) => format!("{key}=any"),
        },
    }
}

fn lines(why: &[String]) -> String {
    why.iter().map(|l| format!("\n  {l}")).collect()
}

fn count(what: &str, want: &Option<Count>, n: usize) -> Result<(), Failure> {
    match want {
        Some(c) if !c.holds(n) => Err(Failure {
            what: what.into(),
            want: c.to_string(),
            found: n.to_string(),
            ..Failure::default()
        }),
        _ => Ok(()),
    }
}

fn groups(
    what: &str,
    want: &Option<BTreeMap<String, Count>>,
    have: &BTreeMap<String, usize>,
) -> Result<(), Failure> {
    for (k, c) in want.iter().flatten() {
        count(
            &format!("{what} {k}"),
            &Some(*c),
            have.get(k).copied().unwrap_or(0),
        )?;
    }
    Ok(())
}

impl Expect {
    /// Checks every given field against `o`.
    pub fn check(&self, o: &Observation) -> Result<(), Failure> {
        count("nodes", &self.nodes, o.claims.len())?;
        count("pending pods", &self.pending, o.pending)?;
        count("running pods", &self.running, o.running)?;
        count("launched NodeClaims", &self.launched, o.launched)?;
        count("interruptions", &self.interruptions, o.interruptions)?;
        if let Some(m) = &self.cost_per_hour {
            let c = o.cost_per_hour();
            let low = m.min.is_some_and(|v| c < v - 1e-9);
            let high = m.max.is_some_and(|v| c > v + 1e-9);
            if low || high {
                return Err(Failure {
                    what: "cost per hour".into(),
                    want: m.to_string(),
                    found: format!("${c:.4}"),
                    ..Failure::default()
                });
            }
        }
        for reason in &self.events {
            if !o.reasons.contains_key(reason) {
                return Err(Failure {
                    what: "an event with reason".into(),
                    want: reason.clone(),
                    found: format!(
                        "only {}",
                        o.reasons.keys().cloned().collect::<Vec<_>>().join(", ")
                    ),
                    ..Failure::default()
                });
            }
        }
        if let Some(types) = &self.instance_types {
            let other: Vec<&str> = o
                .claims
                .iter()
                .map(|c| c.instance_type.as_str())
                .filter(|t| !types.iter().any(|w| w == t))
                .collect();
            if !other.is_empty() {
                return Err(Failure {
                    what: "instance types in".into(),
                    want: format!("[{}]", types.join(", ")),
                    found: other.join(", "),
                    ..Failure::default()
                });
            }
        }
        groups(
            "nodes of capacity type",
            &self.capacity_types,
            &o.by(|c| &c.capacity_type),
        )?;
        groups(
            "nodes of NodePool",
            &self.node_pools,
            &o.by(|c| &c.node_pool),
        )?;
        Ok(())
    }
}
