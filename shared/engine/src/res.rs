//! Dense resource vectors: every resource name in a snapshot gets a slot, so fitting a pod is
//! a handful of integer comparisons.

use kerf_catalog::Resources;
use rustc_hash::FxHashMap;
use smallvec::SmallVec;

/// Maps resource names to vector slots. `cpu`, `memory` and `pods` always come first.
#[derive(Clone, Debug)]
pub struct ResIndex {
    names: Vec<String>,
    slots: FxHashMap<String, usize>,
}

pub const CPU: usize = 0;
pub const MEMORY: usize = 1;
pub const PODS: usize = 2;

impl ResIndex {
    pub fn new() -> Self {
        let mut ix = ResIndex {
            names: Vec::new(),
            slots: FxHashMap::default(),
        };
        for n in ["cpu", "memory", "pods"] {
            ix.slot(n);
        }
        ix
    }

    /// The slot for `name`, adding one if new.
    pub fn slot(&mut self, name: &str) -> usize {
        if let Some(&s) = self.slots.get(name) {
            return s;
        }
        self.names.push(name.to_string());
        self.slots.insert(name.to_string(), self.names.len() - 1);
        self.names.len() - 1
    }

    /// Registers every name used by `r`.
    pub fn learn(&mut self, r: &Resources) {
        for k in r.0.keys() {
            self.slot(k);
        }
    }

    /// The slot of `name`, if registered.
    pub fn find(&self, name: &str) -> Option<usize> {
        self.slots.get(name).copied()
    }

    pub fn len(&self) -> usize {
        self.names.len()
    }

    pub fn name(&self, slot: usize) -> &str {
        &self.names[slot]
    }

    /// Converts a resource list; names not yet registered are ignored (call `learn` first).
    pub fn vec(&self, r: &Resources) -> Res {
        let mut v = Res::zero(self.len());
        for (k, val) in &r.0 {
            if let Some(&s) = self.slots.get(k) {
                v.0[s] = *val;
            }
        }
        v
    }

    /// Converts back to a named list, skipping zeros.
    pub fn resources(&self, v: &Res) -> Resources {
        let mut r = Resources::new();
        for (i, val) in v.0.iter().enumerate() {
            if *val != 0 {
                r.set(&self.names[i], *val);
            }
        }
        r
    }
}

impl Default for ResIndex {
    fn default() -> Self {
        Self::new()
    }
}

/// The dimensions a resource vector holds without a heap allocation: cpu, memory, pods,
/// ephemeral storage and a few extended resources.
const INLINE: usize = 8;

/// A resource vector in milli-units, indexed by [`ResIndex`] slots. Held inline (up to
/// [`INLINE`] dimensions), so checking a pod against thousands of nodes reads their resources
/// where the nodes are instead of chasing a pointer per node.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Res(pub SmallVec<[i64; INLINE]>);

impl Res {
    pub fn zero(n: usize) -> Self {
        Res::filled(n, 0)
    }

    /// `n` dimensions of `v`.
    pub fn filled(n: usize, v: i64) -> Self {
        Res(smallvec::smallvec![v; n])
    }

    pub fn add(&mut self, o: &Res) {
        for (a, b) in self.0.iter_mut().zip(&o.0) {
            *a = a.saturating_add(*b);
        }
    }

    pub fn sub(&mut self, o: &Res) {
        for (a, b) in self.0.iter_mut().zip(&o.0) {
            *a = a.saturating_sub(*b);
        }
    }

    pub fn plus(&self, o: &Res) -> Res {
        let mut r = self.clone();
        r.add(o);
        r
    }

    pub fn minus(&self, o: &Res) -> Res {
        let mut r = self.clone();
        r.sub(o);
        r
    }

    /// True when `need` fits within `self` in every dimension.
    pub fn fits(&self, need: &Res) -> bool {
        self.0.iter().zip(&need.0).all(|(have, want)| want <= have)
    }

    pub fn floor_zero(&mut self) {
        for a in &mut self.0 {
            *a = (*a).max(0);
        }
    }
}
