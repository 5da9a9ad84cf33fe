//! Typed reads of the store for the simulated components (scheduler, kubelet, workload
//! controllers): each resource is parsed once per change and shared until it changes again,
//! instead of being serialized, sent and parsed on every list. Kerf's own code never reads
//! this way; it goes through the HTTP API like any client.

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use serde::de::DeserializeOwned;

use crate::state::State;

type Entry = (u64, Arc<dyn Any + Send + Sync>);

/// The cache; clones share it.
#[derive(Clone)]
pub struct Cached {
    state: Arc<State>,
    entries: Arc<Mutex<HashMap<(String, TypeId), Entry>>>,
}

impl std::fmt::Debug for Cached {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cached").finish_non_exhaustive()
    }
}

impl Cached {
    pub(crate) fn new(state: Arc<State>) -> Self {
        Cached {
            state,
            entries: Arc::default(),
        }
    }

    /// Every object of `res` (`group/plural`, e.g. `/pods`, `apps/deployments`), in key
    /// order, as `T`; a list equal to what the API server would return. An object that does
    /// not parse as `T` is a `kube::Error::SerdeError`, as from a client's list.
    pub fn list<T>(&self, res: &str) -> Result<Arc<Vec<T>>, kube::Error>
    where
        T: DeserializeOwned + Send + Sync + 'static,
    {
        let key = (res.to_string(), TypeId::of::<T>());
        let (at, objects) = {
            let st = self.state.store();
            let at = st.changed_at(res);
            if let Some(hit) = self.hit::<T>(&key, at) {
                return Ok(hit);
            }
            let objects: Vec<_> = st.range(res, None, None).map(|(_, o)| o.clone()).collect();
            (at, objects)
        };
        let parsed = objects
            .iter()
            .map(|o| T::deserialize(o.as_ref()))
            .collect::<Result<Vec<T>, _>>()
            .map_err(kube::Error::SerdeError)?;
        let parsed = Arc::new(parsed);
        if let Ok(mut e) = self.entries.lock() {
            e.insert(key, (at, parsed.clone()));
        }
        Ok(parsed)
    }

    fn hit<T: Send + Sync + 'static>(
        &self,
        key: &(String, TypeId),
        at: u64,
    ) -> Option<Arc<Vec<T>>> {
        let e = self.entries.lock().ok()?;
        let (when, any) = e.get(key)?;
        if *when != at {
            return None;
        }
        any.clone().downcast::<Vec<T>>().ok()
    }
}
