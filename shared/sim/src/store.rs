//! Generic object storage: JSON objects keyed by resource/namespace/name, a global
//! resourceVersion counter, and a bounded event history that feeds watches.

use serde_json::{Value, json};
use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;
use tokio::sync::broadcast;

/// Storage identity of a resource type: `group/plural` (shared by all its versions).
pub type ResKey = String;
/// `(resource, namespace, name)`; cluster-scoped objects use an empty namespace.
pub type Key = (ResKey, String, String);

/// A watch event type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventType {
    /// Object created.
    Added,
    /// Object changed.
    Modified,
    /// Object removed.
    Deleted,
}

impl EventType {
    /// Wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Added => "ADDED",
            Self::Modified => "MODIFIED",
            Self::Deleted => "DELETED",
        }
    }
}

/// One stored change.
#[derive(Debug, Clone)]
pub struct Change {
    /// resourceVersion of the change.
    pub rv: u64,
    /// Resource it belongs to.
    pub res: ResKey,
    /// What happened.
    pub kind: EventType,
    /// Object after the change (for deletes: last state with the deletion rv).
    pub obj: Arc<Value>,
    /// Object before the change, if any.
    pub old: Option<Arc<Value>>,
}

/// The state of all objects.
#[derive(Debug)]
pub struct Store {
    objects: BTreeMap<Key, Arc<Value>>,
    rv: u64,
    history: VecDeque<Arc<Change>>,
    history_cap: usize,
    /// The oldest resourceVersion a watch or continue token may still start from.
    pub compacted: u64,
    tx: broadcast::Sender<Arc<Change>>,
    clock: SimClock,
    /// The resourceVersion of each resource's last change.
    changed: std::collections::HashMap<ResKey, u64>,
}

/// Where the server's timestamps (creation, deletion, PDB disruptions) come from: the
/// machine's clock by default, a simulated clock for simulated time.
#[derive(Clone)]
pub struct SimClock(pub Arc<dyn Fn() -> jiff::Timestamp + Send + Sync>);

impl SimClock {
    /// The machine's clock.
    pub fn system() -> Self {
        SimClock(Arc::new(jiff::Timestamp::now))
    }

    /// Now, RFC 3339 with seconds precision (`2026-01-02T03:04:05Z`).
    pub fn rfc3339(&self) -> String {
        (self.0)().strftime("%Y-%m-%dT%H:%M:%SZ").to_string()
    }
}

impl std::fmt::Debug for SimClock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SimClock")
    }
}

impl Default for SimClock {
    fn default() -> Self {
        SimClock::system()
    }
}

/// The storage key of an object.
pub fn key(res: &str, ns: &str, name: &str) -> Key {
    (res.to_string(), ns.to_string(), name.to_string())
}

impl Store {
    /// An empty store; resourceVersions start above 100 like a fresh etcd.
    pub fn new(history_cap: usize, clock: SimClock) -> Self {
        let (tx, _) = broadcast::channel(4096);
        Self {
            objects: BTreeMap::new(),
            rv: 100,
            history: VecDeque::new(),
            history_cap,
            compacted: 0,
            tx,
            clock,
            changed: Default::default(),
        }
    }

    /// A copy to try a write on and throw away (`dryRun=All`): the same objects and
    /// resourceVersions, and no watcher hears what happens to it.
    pub fn sandbox(&self) -> Store {
        let (tx, _) = broadcast::channel(1);
        Store {
            objects: self.objects.clone(),
            rv: self.rv,
            history: VecDeque::new(),
            history_cap: 0,
            compacted: self.rv,
            tx,
            clock: self.clock.clone(),
            changed: self.changed.clone(),
        }
    }

    /// The server's clock.
    pub fn clock(&self) -> &SimClock {
        &self.clock
    }

    /// The server's current time, RFC 3339.
    pub fn now(&self) -> String {
        self.clock.rfc3339()
    }

    /// Current global resourceVersion.
    pub fn rv(&self) -> u64 {
        self.rv
    }

    /// One object.
    pub fn get(&self, k: &Key) -> Option<Arc<Value>> {
        self.objects.get(k).cloned()
    }

    /// Objects of a resource in key order, optionally in one namespace, strictly after `after`.
    pub fn range<'a>(
        &'a self,
        res: &'a str,
        ns: Option<&'a str>,
        after: Option<(String, String)>,
    ) -> impl Iterator<Item = (&'a Key, &'a Arc<Value>)> + 'a {
        use std::ops::Bound;
        let start = match after {
            Some((n, m)) => Bound::Excluded((res.to_string(), n, m)),
            None => Bound::Included((res.to_string(), ns.unwrap_or("").to_string(), String::new())),
        };
        self.objects
            .range((start, Bound::Unbounded))
            .take_while(move |(k, _)| k.0 == res && ns.is_none_or(|n| k.1 == n))
    }

    /// Stores an object under a new resourceVersion and records the change.
    pub fn put(&mut self, k: Key, mut obj: Value) -> Arc<Value> {
        self.rv += 1;
        obj["metadata"]["resourceVersion"] = json!(self.rv.to_string());
        let obj = Arc::new(obj);
        let old = self.objects.insert(k.clone(), obj.clone());
        let kind = if old.is_some() {
            EventType::Modified
        } else {
            EventType::Added
        };
        self.record(k.0, kind, obj.clone(), old);
        obj
    }

    /// Removes an object; the returned last state carries the deletion resourceVersion.
    pub fn remove(&mut self, k: &Key) -> Option<Arc<Value>> {
        let old = self.objects.remove(k)?;
        self.rv += 1;
        let mut last = (*old).clone();
        last["metadata"]["resourceVersion"] = json!(self.rv.to_string());
        let last = Arc::new(last);
        self.record(k.0.clone(), EventType::Deleted, last.clone(), Some(old));
        Some(last)
    }

    fn record(&mut self, res: ResKey, kind: EventType, obj: Arc<Value>, old: Option<Arc<Value>>) {
        self.changed.insert(res.clone(), self.rv);
        let change = Arc::new(Change {
            rv: self.rv,
            res,
            kind,
            obj,
            old,
        });
        self.history.push_back(change.clone());
        while self.history.len() > self.history_cap {
            if let Some(c) = self.history.pop_front() {
                self.compacted = self.compacted.max(c.rv);
            }
        }
        // No receivers is fine.
        let _ = self.tx.send(change);
    }

    /// Changes to `res` after `rv`, or `None` if history no longer reaches back that far.
    pub fn changes_since(&self, res: &str, rv: u64) -> Option<Vec<Arc<Change>>> {
        if rv < self.compacted {
            return None;
        }
        Some(
            self.history
                .iter()
                .filter(|c| c.rv > rv && c.res == res)
                .cloned()
                .collect(),
        )
    }

    /// A receiver of all future changes.
    pub fn subscribe(&self) -> broadcast::Receiver<Arc<Change>> {
        self.tx.subscribe()
    }

    /// Forgets all history: older watches and continue tokens get 410 Expired.
    pub fn compact(&mut self) {
        self.history.clear();
        self.rv += 1;
        self.compacted = self.rv;
    }

    /// The resourceVersion of the last change to `res` (0 if it never changed).
    pub fn changed_at(&self, res: &str) -> u64 {
        self.changed.get(res).copied().unwrap_or(0)
    }

    /// Number of stored objects of a resource.
    pub fn count(&self, res: &str) -> usize {
        self.range(res, None, None).count()
    }
}
