//! An instance type's labels as requirements see them: which keys the type decides and its
//! value for each.

use kerf_catalog::InstanceType;

use crate::labels;
use crate::requirements::Requirement;

/// Keys an instance type's labels do not decide: offerings (zone, capacity type, partition,
/// capacity reservation), the pool and the node do.
pub const NOT_OF_THE_TYPE: [&str; 8] = [
    labels::ZONE,
    labels::CAPACITY_TYPE,
    labels::PLACEMENT_GROUP_PARTITION,
    labels::CAPACITY_RESERVATION_ID,
    labels::CAPACITY_RESERVATION_TYPE,
    labels::CAPACITY_RESERVATION_INTERRUPTIBLE,
    labels::NODEPOOL,
    labels::HOSTNAME,
];

/// An instance type's value for a label key (its labels, plus the catalog's region).
pub fn type_label<'a>(it: &'a InstanceType, region: &'a str, key: &str) -> Option<&'a str> {
    if key == labels::REGION && !region.is_empty() {
        return Some(region);
    }
    it.labels.get(key).map(String::as_str)
}

/// True when the type's labels satisfy `key req` (a key the type does not carry satisfies
/// only a requirement that allows absence, unless the key is a custom one types never carry).
pub fn type_satisfies(it: &InstanceType, region: &str, key: &str, req: &Requirement) -> bool {
    match type_label(it, region, key) {
        Some(v) => req.has(v),
        None => !labels::is_well_known(key) || req.allows_absent(),
    }
}
