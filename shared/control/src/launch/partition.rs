//! Partition placement groups at launch, as Karpenter's AWS provider handles them: offerings
//! are per partition, a NodeClaim that names partitions launches into the lowest it allows
//! (EC2 takes one partition number), and the claim's partition label is that partition, or
//! empty until registration reads the partition EC2 chose from the instance.

use kerf_catalog::{InstanceType, Offering, placement};
use kerf_engine::requirements::Requirements;

use crate::names::PLACEMENT_GROUP_PARTITION;

/// Whether `reqs` admit the offering's partition (an offering outside a partition group has
/// none: only a requirement that allows the label to be absent admits it).
pub fn allowed(reqs: &Requirements, o: &Offering) -> bool {
    reqs.get(PLACEMENT_GROUP_PARTITION)
        .is_none_or(|r| match o.partition {
            Some(p) => r.has(&p.to_string()),
            None => r.allows_absent(),
        })
}

/// The partition to launch into: the lowest the requirements allow among `offerings`, when
/// they constrain the partition at all (`None`: EC2 picks one).
pub fn chosen<'a>(
    reqs: &Requirements,
    offerings: impl IntoIterator<Item = &'a Offering>,
) -> Option<u32> {
    reqs.get(PLACEMENT_GROUP_PARTITION)?;
    offerings
        .into_iter()
        .filter(|o| allowed(reqs, o))
        .filter_map(|o| o.partition)
        .min()
}

/// The partition label of a claim launched as `it`: the partition it asked for, else empty
/// (filled at registration); `None` outside a partition group.
pub fn label(it: &InstanceType, asked: Option<&String>) -> Option<String> {
    placement::is_partitioned(it).then(|| asked.cloned().unwrap_or_default())
}
