//! The snapshot's storage objects (PersistentVolumeClaims, PersistentVolumes, StorageClasses,
//! CSINodes) as the engine's volume facts: pods' volume topology, attachments and wait
//! reasons, and nodes' attach limits. Objects that do not convert are reported to `warn` and
//! left out (a pod whose claim is left out then waits for it, named).

use std::collections::BTreeMap;

use kerf_convert::FieldError;
use kerf_convert::volumes::{Storage, claim_refs, csi_limits};

use crate::ports::Snapshot;

/// Called with the kind, name and error of an object that does not convert.
pub type Warn<'a> = &'a dyn Fn(&str, &str, &dyn std::fmt::Display);

/// The storage objects of `snap`, indexed for resolving pods' claims.
pub fn storage(snap: &Snapshot, warn: Warn<'_>) -> Storage {
    let mut s = Storage::default();
    let name = |m: &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta| {
        m.name.clone().unwrap_or_default()
    };
    let report = |kind: &str, n: String, r: Result<(), FieldError>| {
        if let Err(e) = r {
            warn(kind, &n, &e);
        }
    };
    for c in &snap.persistent_volume_claims {
        let key = format!(
            "{}/{}",
            c.metadata.namespace.as_deref().unwrap_or("default"),
            name(&c.metadata)
        );
        report("PersistentVolumeClaim", key, s.add_claim(c));
    }
    for v in &snap.persistent_volumes {
        report("PersistentVolume", name(&v.metadata), s.add_volume(v));
    }
    for c in &snap.storage_classes {
        report("StorageClass", name(&c.metadata), s.add_class(c));
    }
    s
}

/// Sets a converted pod's volume facts from the claims its spec's volumes use.
pub fn resolve(
    storage: &Storage,
    pod: &k8s_openapi::api::core::v1::Pod,
    out: &mut kerf_engine::model::Pod,
) {
    let Some(spec) = &pod.spec else {
        return;
    };
    let refs = claim_refs(spec, &out.name);
    if !refs.is_empty() {
        storage.resolve(out, &refs);
    }
}

/// Attach limits by node name, from the CSINodes.
pub fn limits(snap: &Snapshot, warn: Warn<'_>) -> BTreeMap<String, BTreeMap<String, u32>> {
    let mut out = BTreeMap::new();
    for c in &snap.csi_nodes {
        match csi_limits(c) {
            Ok((node, l)) => {
                out.insert(node, l);
            }
            Err(e) => warn(
                "CSINode",
                c.metadata.name.as_deref().unwrap_or_default(),
                &e,
            ),
        }
    }
    out
}

#[cfg(test)]
#[path = "volumes_tests.rs"]
mod tests;
