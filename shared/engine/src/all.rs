//! `kerf plan --mode all`: provisioning, then disruption of the cluster it leaves.

use crate::disruption::{self, DisruptOptions};
use crate::model::Snapshot;
use crate::plan::Plan;
use crate::provisioning::provision;
use crate::summary::summarize;

/// `kerf plan --mode all`: provisioning first, then disruption of the cluster as
/// provisioning would leave it (disruption plans with the pending pods placed first, and its
/// replacements never take the names of provisioning's launches).
pub fn plan_all(snap: &Snapshot, opts: &DisruptOptions) -> Plan {
    let mut plan = provision(snap, &opts.provisioning());
    let taken: Vec<String> = plan.launches.iter().map(|l| l.node_claim.clone()).collect();
    let nominated: Vec<String> = plan.nominations.iter().map(|n| n.node.clone()).collect();
    let d = disruption::disrupt_with(snap, opts, &taken, &nominated);
    plan.disruptions = d.disruptions;
    plan.skipped = d.skipped;
    plan.drifted = d.drifted;
    plan.budgets = d.budgets;
    let pending = plan.summary.pending_pods;
    summarize(&mut plan, pending);
    plan
}
