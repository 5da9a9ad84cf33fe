//! How a disruption simulation sees a snapshot (nodes gone, bound pods moved), and what an
//! earlier preparation of the same snapshot computed.

use std::collections::BTreeMap;

use rustc_hash::FxHashSet;

use crate::slots::Slot;

/// How a disruption simulation sees the snapshot: some nodes gone, some bound pods moved
/// (pending again, no longer counted where they run). Empty for provisioning.
#[derive(Clone, Copy, Debug, Default)]
pub struct Overlay<'o> {
    pub gone: Option<&'o FxHashSet<String>>,
    pub moved: Option<&'o FxHashSet<usize>>,
    /// What an earlier preparation of the same snapshot computed.
    pub cached: Option<&'o Cached>,
}

/// Per-snapshot work that does not depend on the overlay: every usable node's slot (before
/// topology counts) and the namespaces' labels.
#[derive(Clone, Debug)]
pub struct Cached {
    pub nodes: Vec<Slot>,
    pub namespaces: Namespaces,
}

impl Overlay<'_> {
    pub fn gone(&self, node: &str) -> bool {
        self.gone.is_some_and(|g| g.contains(node))
    }

    pub fn moved(&self, pod: usize) -> bool {
        self.moved.is_some_and(|m| m.contains(&pod))
    }
}

/// Namespace labels of every namespace the snapshot knows (from Namespace objects and the
/// pods' own namespaces), with the `kubernetes.io/metadata.name` label the API server sets.
pub type Namespaces = BTreeMap<String, BTreeMap<String, String>>;
