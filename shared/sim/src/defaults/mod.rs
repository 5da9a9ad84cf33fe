//! Built-in admission that fills in a new object from others in the store, as kube-apiserver's
//! plugins do: `DefaultStorageClass` gives a PersistentVolumeClaim that names no StorageClass
//! (the field absent; `""` asks for none) the cluster's default class.

use serde_json::{Value, json};

use crate::store::Store;

/// The StorageClasses' storage key.
const STORAGE_CLASSES: &str = "storage.k8s.io/storageclasses";

/// The annotations that mark a default StorageClass (GA and the older beta one).
const DEFAULT_CLASS: [&str; 2] = [
    "storageclass.kubernetes.io/is-default-class",
    "storageclass.beta.kubernetes.io/is-default-class",
];

fn is_default(class: &Value) -> bool {
    DEFAULT_CLASS
        .iter()
        .any(|a| class["metadata"]["annotations"][a].as_str() == Some("true"))
}

/// The default StorageClass: the newest of those marked default, the first by name among
/// equally new ones (as kube-apiserver picks when several are marked).
pub fn default_storage_class(st: &Store) -> Option<String> {
    let mut best: Option<(&str, &str)> = None;
    for (_, c) in st.range(STORAGE_CLASSES, None, None) {
        if !is_default(c) {
            continue;
        }
        let created = c["metadata"]["creationTimestamp"].as_str().unwrap_or("");
        let name = c["metadata"]["name"].as_str().unwrap_or("");
        // RFC 3339 timestamps of one server compare as strings.
        let newer = best.is_none_or(|(t, n)| created > t || (created == t && name < n));
        if newer {
            best = Some((created, name));
        }
    }
    best.map(|(_, n)| n.to_string())
}

/// `DefaultStorageClass` on a new claim.
pub fn claim_on_create(st: &Store, claim: &mut Value) {
    if claim["spec"].get("storageClassName").is_some() {
        return;
    }
    if let Some(class) = default_storage_class(st) {
        claim["spec"]["storageClassName"] = json!(class);
    }
}

#[cfg(test)]
mod tests;
