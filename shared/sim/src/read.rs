//! GET of one object and paginated, filtered lists with continue tokens.

use crate::error::ApiError;
use crate::query::Query;
use crate::registry::ResourceInfo;
use crate::store::{Store, key};
use crate::write::res_key;
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::sync::Arc;

/// One object or 404.
pub fn get(st: &Store, res: &ResourceInfo, ns: &str, name: &str) -> Result<Arc<Value>, ApiError> {
    let ns = if res.namespaced { ns } else { "" };
    st.get(&key(&res_key(res), ns, name))
        .ok_or_else(|| ApiError::not_found(&res.res_name(), name))
}

/// A page of a list, collected under the lock and serialized outside it.
#[derive(Debug)]
pub struct Page {
    items: Vec<Arc<Value>>,
    rv: u64,
    continue_token: Option<String>,
}

fn encode_token(rv: u64, ns: &str, name: &str) -> String {
    URL_SAFE_NO_PAD.encode(json!({"rv": rv, "start": [ns, name]}).to_string())
}

fn decode_token(t: &str) -> Result<(u64, String, String), ApiError> {
    let bad = || ApiError::bad_request(format!("invalid continue token: {t}"));
    let bytes = URL_SAFE_NO_PAD.decode(t).map_err(|_| bad())?;
    let v: Value = serde_json::from_slice(&bytes).map_err(|_| bad())?;
    let s = |i: usize| v["start"][i].as_str().map(str::to_string).ok_or_else(bad);
    Ok((v["rv"].as_u64().ok_or_else(bad)?, s(0)?, s(1)?))
}

/// Collects one page: `limit` items after the continue token, filtered by the selectors.
/// A continued list shows the objects as they were at the first page's resourceVersion
/// (as etcd serves it), rebuilt from the change history; 410 once that history is gone.
pub fn list(st: &Store, res: &ResourceInfo, ns: Option<&str>, q: &Query) -> Result<Page, ApiError> {
    let sel = q.selectors(res)?;
    let rk = res_key(res);
    let limit = if q.limit == 0 { usize::MAX } else { q.limit };
    let (rv, candidates) = match &q.continue_token {
        Some(t) => {
            let (rv, n, m) = decode_token(t)?;
            let expired = || {
                ApiError::expired(
                    "The provided continue parameter is too old to display a consistent list result. \
                     You can start a new list without the continue parameter.",
                )
            };
            if rv < st.compacted {
                return Err(expired());
            }
            let changes = st.changes_since(&rk, rv).ok_or_else(expired)?;
            (rv, as_of(st, &rk, ns, (n, m), &changes))
        }
        None => (
            st.rv(),
            st.range(&rk, ns, None).map(|(_, o)| o.clone()).collect(),
        ),
    };
    let mut iter = candidates.into_iter().filter(|o| sel.matches(o));
    let items: Vec<Arc<Value>> = iter.by_ref().take(limit).collect();
    let more = iter.next().is_some();
    let continue_token = more.then(|| {
        let last = items.last().map(|o| {
            let m = &o["metadata"];
            (
                m["namespace"].as_str().unwrap_or_default(),
                m["name"].as_str().unwrap_or_default(),
            )
        });
        let (n, m) = last.unwrap_or_default();
        encode_token(rv, n, m)
    });
    Ok(Page {
        items,
        rv,
        continue_token,
    })
}

/// The objects of `rk` after `after` as they were before `changes` (all changes since the
/// list's resourceVersion), in key order.
fn as_of(
    st: &Store,
    rk: &str,
    ns: Option<&str>,
    after: (String, String),
    changes: &[Arc<crate::store::Change>],
) -> Vec<Arc<Value>> {
    use crate::store::EventType;
    let mut then: BTreeMap<(String, String), Option<Arc<Value>>> = BTreeMap::new();
    for c in changes {
        let m = &c.obj["metadata"];
        let k = (
            m["namespace"].as_str().unwrap_or_default().to_string(),
            m["name"].as_str().unwrap_or_default().to_string(),
        );
        then.entry(k).or_insert_with(|| match c.kind {
            EventType::Added => None,
            _ => c.old.clone(),
        });
    }
    let in_scope = |k: &(String, String)| *k > after && ns.is_none_or(|n| k.0 == n);
    let mut out: BTreeMap<(String, String), Arc<Value>> = st
        .range(rk, ns, Some(after.clone()))
        .filter(|(k, _)| !then.contains_key(&(k.1.clone(), k.2.clone())))
        .map(|(k, o)| ((k.1.clone(), k.2.clone()), o.clone()))
        .collect();
    for (k, o) in then {
        if let Some(o) = o.filter(|_| in_scope(&k)) {
            out.insert(k, o);
        }
    }
    out.into_values().collect()
}

impl Page {
    /// The page's objects.
    pub fn items(&self) -> &[Arc<Value>] {
        &self.items
    }

    /// The resourceVersion the page was read at.
    pub fn resource_version(&self) -> u64 {
        self.rv
    }

    /// The `<Kind>List` JSON bytes.
    pub fn to_bytes(&self, res: &ResourceInfo) -> Vec<u8> {
        let mut meta = json!({"resourceVersion": self.rv.to_string()});
        if let Some(t) = &self.continue_token {
            meta["continue"] = json!(t);
        }
        let head = json!({"kind": format!("{}List", res.kind), "apiVersion": res.api_version(), "metadata": meta});
        let mut out = head.to_string().into_bytes();
        out.pop();
        out.extend_from_slice(b",\"items\":[");
        for (i, item) in self.items.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            // Serializing a Value into a Vec cannot fail.
            let _ = serde_json::to_writer(&mut out, item.as_ref());
        }
        out.extend_from_slice(b"]}");
        out
    }
}
