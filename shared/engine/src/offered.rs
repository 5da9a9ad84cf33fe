//! What a NodePool's instance types are offered in: zones, capacity types and partitions,
//! within the pool's requirements, available now or not.

use std::collections::BTreeSet;

use kerf_catalog::InstanceType;

use crate::labels;
use crate::requirements::Requirements;
use crate::type_labels::{NOT_OF_THE_TYPE, type_satisfies};

/// The zones, capacity types and partitions a NodePool is offered in, available now or not.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Offered {
    pub zones: BTreeSet<String>,
    pub capacity_types: BTreeSet<String>,
    /// Partitions of the node class's partition placement group (empty outside one).
    pub partitions: BTreeSet<String>,
}

impl Offered {
    /// What the catalog's types that `reqs` admit are offered in, within `reqs`.
    pub fn of(types: &[InstanceType], region: &str, reqs: &Requirements) -> Self {
        let mut out = Offered::default();
        for it in types.iter().filter(|it| admits(it, region, reqs)) {
            for o in &it.offerings {
                let ct = o.capacity_type.as_str();
                let part = o.partition.map(|p| p.to_string());
                let part_ok = match &part {
                    Some(p) => allows(reqs, labels::PLACEMENT_GROUP_PARTITION, p),
                    None => reqs
                        .get(labels::PLACEMENT_GROUP_PARTITION)
                        .is_none_or(|r| r.allows_absent()),
                };
                if allows(reqs, labels::ZONE, &o.zone)
                    && allows(reqs, labels::CAPACITY_TYPE, ct)
                    && part_ok
                {
                    out.zones.insert(o.zone.clone());
                    out.capacity_types.insert(ct.to_string());
                    out.partitions.extend(part);
                }
            }
        }
        out
    }
}

/// True when the type's labels meet `reqs` (zone and capacity type are the offerings' concern).
fn admits(it: &InstanceType, region: &str, reqs: &Requirements) -> bool {
    reqs.iter()
        .all(|(k, r)| NOT_OF_THE_TYPE.contains(&k.as_str()) || type_satisfies(it, region, k, r))
}

fn allows(reqs: &Requirements, key: &str, value: &str) -> bool {
    reqs.get(key).is_none_or(|r| r.has(value))
}
