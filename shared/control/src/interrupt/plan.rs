//! What a batch of interruptions asks of Kerf's NodeClaims, decided from one snapshot as
//! Karpenter's handler decides for each NodeClaim a message names: the Events to record on it
//! and its Node, the offering to mark unavailable (a spot interruption's spot offering, a
//! capacity-reservation interruption's reserved offering), and whether to evacuate it (replacements
//! first, then its termination; forcefully after a failed status check). A NodeClaim already
//! deleting gets its Events and marks too, and is not deleted again.

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::api::core::v1::Node;
use kerf_api::v1::NodeClaim;
use kerf_catalog::CapacityType;
use kerf_catalog::unavailable::OfferingKey;

use super::act::{InterruptOptions, REBALANCE_ANNOTATION};
use super::events::Interruption;
use super::notice::{Notice, dedupe};
use crate::claim;
use crate::metrics::Metrics;
use crate::metrics::names::INSTANCE_STATUS_UNHEALTHY;
use crate::ports::{EventSpec, HealthCategory, Snapshot};

/// What to do, for which NodeClaims, and the messages asking for it.
#[derive(Debug, Default)]
pub struct Plan {
    /// NodeClaims to evacuate, each with the ids of the messages asking for it.
    pub evacuate: BTreeMap<String, Vec<String>>,
    /// Offerings to mark unavailable.
    pub reclaimed: Vec<OfferingKey>,
    /// NodeClaims terminated forcefully (failed status checks): their termination deadline is
    /// now, so the drain does not wait for PDBs.
    pub forceful: BTreeSet<String>,
    /// The kind of the first message asking for each NodeClaim's termination.
    pub kinds: BTreeMap<String, &'static str>,
    /// The Events the messages record, before anything is done.
    pub events: Vec<EventSpec>,
    /// The Events each evacuated NodeClaim's termination records once started.
    pub on_termination: BTreeMap<String, Vec<EventSpec>>,
}

impl Plan {
    /// The plan for `work` (`(message id, interruption)`) against `snap`; instances Kerf does
    /// not manage are ignored.
    pub fn of(
        snap: &Snapshot,
        metrics: &Metrics,
        work: &[(&str, Interruption)],
        opts: &InterruptOptions,
    ) -> Plan {
        let claims = by_instance(&snap.node_claims, claim::provider_id);
        let nodes = by_instance(&snap.nodes, |n| n.spec.as_ref()?.provider_id.as_deref());
        let mut plan = Plan::default();
        for (id, i) in work {
            for instance in i.instance_ids() {
                if let Some(c) = claims.get(instance) {
                    let node = nodes.get(instance).copied();
                    plan.decide(snap, metrics, c, node, id, i, opts);
                }
            }
        }
        plan.events = dedupe(std::mem::take(&mut plan.events));
        plan
    }

    /// What message `id` asks for NodeClaim `c` (on `node`).
    #[allow(clippy::too_many_arguments)]
    fn decide(
        &mut self,
        snap: &Snapshot,
        metrics: &Metrics,
        c: &NodeClaim,
        node: Option<&Node>,
        id: &str,
        i: &Interruption,
        opts: &InterruptOptions,
    ) {
        if let Some(n) = Notice::of(i) {
            self.events.extend(n.events(c, node));
        }
        self.reclaimed.extend(reclaimed(i, c));
        if let Interruption::InstanceUnhealthy { category, .. } = i {
            let kind = [("category", category.kind())];
            metrics.count(INSTANCE_STATUS_UNHEALTHY, &kind, 1.0);
        }
        if c.metadata.deletion_timestamp.is_some() || !evacuates(snap, c, i, opts) {
            return;
        }
        let name = claim::name(c).to_string();
        if matches!(i, Interruption::InstanceUnhealthy { category, .. } if *category != HealthCategory::EventStatus)
        {
            self.forceful.insert(name.clone());
        }
        self.kinds.entry(name.clone()).or_insert(i.kind());
        self.on_termination
            .entry(name.clone())
            .or_insert_with(|| Notice::TerminatingOnInterruption.events(c, node));
        self.evacuate.entry(name).or_default().push(id.to_string());
    }
}

/// Whether `i` evacuates `c`: every interruption does but a rebalance recommendation, which
/// does only when the NodePool opts in and the `RebalanceReplacement` gate is on.
fn evacuates(snap: &Snapshot, c: &NodeClaim, i: &Interruption, opts: &InterruptOptions) -> bool {
    if !matches!(i, Interruption::RebalanceRecommendation { .. }) {
        return true;
    }
    let opted = claim::pool_name(c)
        .and_then(|p| {
            snap.node_pools
                .iter()
                .find(|np| np.metadata.name.as_deref() == Some(p))
        })
        .and_then(|p| p.metadata.annotations.as_ref())
        .and_then(|a| a.get(REBALANCE_ANNOTATION))
        .is_some_and(|v| v == "replace");
    opted && opts.rebalance_replacement
}

/// `items` by the instance id at the end of their provider ID.
fn by_instance<'a, T>(
    items: &'a [T],
    provider_id: impl Fn(&'a T) -> Option<&'a str>,
) -> BTreeMap<&'a str, &'a T> {
    items
        .iter()
        .filter_map(|x| provider_id(x).map(|p| (instance_id(p), x)))
        .collect()
}

/// The instance id at the end of a provider ID (`aws:///zone/i-…`).
fn instance_id(provider_id: &str) -> &str {
    provider_id.rsplit('/').next().unwrap_or(provider_id)
}

/// The offering an interruption takes away, as Karpenter's `markUnavailableOfferings` marks
/// it: a spot interruption's spot offering, a capacity-reservation interruption's reserved
/// offering (of the node's reservation, from its label), of the NodeClaim's instance type and
/// zone.
pub fn reclaimed(i: &Interruption, c: &NodeClaim) -> Option<OfferingKey> {
    let capacity_type = match i {
        Interruption::SpotInterrupted { .. } => CapacityType::Spot,
        Interruption::CapacityReservationInterrupted { .. } => CapacityType::Reserved,
        _ => return None,
    };
    let l = c.metadata.labels.as_ref()?;
    let key = OfferingKey::new(
        capacity_type,
        l.get(kerf_labels::INSTANCE_TYPE)?,
        l.get(kerf_labels::ZONE)?,
    );
    Some(match capacity_type {
        // Only the reservation the node ran in, as Karpenter marks it.
        CapacityType::Reserved => key.in_reservation(
            l.get(kerf_labels::aws::CAPACITY_RESERVATION_ID)
                .map(String::as_str),
        ),
        _ => key,
    })
}

#[cfg(test)]
#[path = "plan_tests.rs"]
mod tests;
