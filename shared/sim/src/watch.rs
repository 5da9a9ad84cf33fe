//! Watches: newline-delimited JSON events from the history after `resourceVersion`, then
//! live changes, with periodic BOOKMARKs and selector-aware ADDED/DELETED transitions. A
//! watch that asked for Tables (`kubectl get -w`) gets each object as a one-row Table, so the
//! columns stay after the first list.

use crate::error::ApiError;
use crate::query::{Query, Selectors};
use crate::registry::ResourceInfo;
use crate::state::State;
use crate::store::{Change, EventType, SimClock};
use crate::write::res_key;
use bytes::Bytes;
use futures::Stream;
use serde_json::{Value, json};
use std::collections::VecDeque;
use std::convert::Infallible;
use std::sync::Arc;
use tokio::sync::broadcast::{Receiver, error::RecvError};
use tokio::time::{Instant, sleep_until};

/// The running state of one watch stream.
struct Watch {
    rx: Receiver<Arc<Change>>,
    pending: VecDeque<Bytes>,
    sel: Selectors,
    res_key: String,
    ns: Option<String>,
    kind: String,
    api_version: String,
    last_rv: u64,
    bookmarks: bool,
    next_bookmark: Instant,
    interval: std::time::Duration,
    deadline: Instant,
    done: bool,
    render: Render,
}

/// How objects are sent: as themselves, or as one-row Tables of their resource.
#[derive(Clone)]
enum Render {
    Object,
    Table(Box<ResourceInfo>, SimClock, crate::table::Include),
}

impl Render {
    fn line(&self, kind: &str, obj: &Arc<Value>) -> Bytes {
        match self {
            Render::Object => line(kind, obj),
            Render::Table(info, clock, include) => {
                let rv = obj["metadata"]["resourceVersion"]
                    .as_str()
                    .and_then(|r| r.parse().ok())
                    .unwrap_or(0);
                let items = std::slice::from_ref(obj);
                let t = crate::table::table(info, items, rv, (clock.0)(), *include);
                line(kind, &t)
            }
        }
    }
}

fn line(kind: &str, obj: &Value) -> Bytes {
    let mut s = json!({"type": kind, "object": obj}).to_string();
    s.push('\n');
    Bytes::from(s)
}

fn expired(rv: &str) -> Bytes {
    let e = ApiError::expired(format!("too old resource version: {rv}"));
    line("ERROR", &e.body)
}

/// Starts a watch (of Tables when `table`); the returned stream ends at the timeout or on a
/// 410.
pub fn start(
    state: &State,
    res: &ResourceInfo,
    ns: Option<&str>,
    q: &Query,
    table: bool,
) -> Result<impl Stream<Item = Result<Bytes, Infallible>> + use<>, ApiError> {
    let sel = q.selectors(res)?;
    let rk = res_key(res);
    let st = state.store();
    let render = if table {
        Render::Table(Box::new(res.clone()), st.clock().clone(), q.include_object)
    } else {
        Render::Object
    };
    let mut pending = VecDeque::new();
    let from = q.resource_version.as_deref().filter(|r| *r != "0");
    let mut done = false;
    match from {
        None => {
            for (_, o) in st.range(&rk, ns, None).filter(|(_, o)| sel.matches(o)) {
                pending.push_back(render.line("ADDED", o));
            }
        }
        Some(r) => match r
            .parse::<u64>()
            .ok()
            .and_then(|rv| st.changes_since(&rk, rv))
        {
            Some(changes) => pending.extend(
                changes
                    .iter()
                    .filter_map(|c| translate(c, &sel, ns, &render)),
            ),
            None => {
                pending.push_back(expired(r));
                done = true;
            }
        },
    }
    let opts = &state.options;
    let timeout = q
        .timeout_seconds
        .map(std::time::Duration::from_secs)
        .unwrap_or(opts.max_watch);
    let now = Instant::now();
    let w = Watch {
        rx: st.subscribe(),
        pending,
        sel,
        res_key: rk,
        ns: ns.map(str::to_string),
        kind: res.kind.clone(),
        api_version: res.api_version(),
        last_rv: st.rv(),
        bookmarks: q.bookmarks,
        next_bookmark: now + opts.bookmark_interval,
        interval: opts.bookmark_interval,
        deadline: now + timeout.min(opts.max_watch),
        done,
        render,
    };
    drop(st);
    Ok(futures::stream::unfold(w, next))
}

/// Maps a stored change to the event this watcher should see, if any.
fn translate(c: &Change, sel: &Selectors, ns: Option<&str>, render: &Render) -> Option<Bytes> {
    let in_ns = |o: &Value| ns.is_none_or(|n| o["metadata"]["namespace"].as_str() == Some(n));
    let now = in_ns(&c.obj) && sel.matches(&c.obj);
    let was = c.old.as_ref().is_some_and(|o| in_ns(o) && sel.matches(o));
    let kind = match (c.kind, was, now) {
        (EventType::Added, _, true) => "ADDED",
        (EventType::Modified, true, true) => "MODIFIED",
        (EventType::Modified, false, true) => "ADDED",
        (EventType::Modified, true, false) => "DELETED",
        (EventType::Deleted, true, _) => "DELETED",
        _ => return None,
    };
    Some(render.line(kind, &c.obj))
}

async fn next(mut w: Watch) -> Option<(Result<Bytes, Infallible>, Watch)> {
    loop {
        if let Some(b) = w.pending.pop_front() {
            return Some((Ok(b), w));
        }
        if w.done {
            return None;
        }
        tokio::select! {
            r = w.rx.recv() => on_change(&mut w, r),
            () = sleep_until(w.next_bookmark) => {
                w.next_bookmark = Instant::now() + w.interval;
                if w.bookmarks {
                    let obj = json!({"kind": w.kind, "apiVersion": w.api_version,
                        "metadata": {"resourceVersion": w.last_rv.to_string()}});
                    w.pending.push_back(line("BOOKMARK", &obj));
                }
            }
            () = sleep_until(w.deadline) => w.done = true,
        }
    }
}

fn on_change(w: &mut Watch, r: Result<Arc<Change>, RecvError>) {
    match r {
        Ok(c) if c.rv > w.last_rv => {
            w.last_rv = c.rv;
            if c.res == w.res_key
                && let Some(b) = translate(&c, &w.sel, w.ns.as_deref(), &w.render)
            {
                w.pending.push_back(b);
            }
        }
        Ok(_) => {}
        Err(RecvError::Lagged(_)) => {
            w.pending.push_back(expired(&w.last_rv.to_string()));
            w.done = true;
        }
        Err(RecvError::Closed) => w.done = true,
    }
}
