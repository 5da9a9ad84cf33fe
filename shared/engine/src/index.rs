//! The resource index of a snapshot: every resource name it mentions, one vector slot each.

use crate::model::Snapshot;
use crate::price::COST_RESOURCE;
use crate::res::ResIndex;

/// Every resource name the snapshot mentions, so vectors line up.
pub(crate) fn resource_index(snap: &Snapshot) -> ResIndex {
    let mut ix = ResIndex::new();
    for p in &snap.pods {
        ix.learn(&p.spec.requests);
    }
    for n in &snap.nodes {
        ix.learn(&n.allocatable);
        ix.learn(&n.capacity);
    }
    for c in &snap.node_claims {
        ix.learn(&c.allocatable);
    }
    for ds in &snap.daemon_sets {
        ix.learn(&ds.pod.requests);
    }
    for np in &snap.node_pools {
        if let Some(l) = &np.limits {
            ix.learn(l);
        }
        if np.max_cost_per_hour.is_some() {
            ix.slot(COST_RESOURCE);
        }
        for it in &np.catalog.instance_types {
            ix.learn(&it.allocatable);
            ix.learn(&it.capacity);
        }
    }
    ix
}
