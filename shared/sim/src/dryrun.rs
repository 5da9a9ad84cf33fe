//! `dryRun=All` (`kubectl apply --dry-run=server`): a create, update, patch or delete runs
//! every check and admission step on a throw-away copy of the store and answers what it would
//! have stored; nothing is stored and no watcher hears of it.

use axum::http::Method;
use serde_json::Value;

use crate::delete::{self, DeleteOptions};
use crate::error::ApiError;
use crate::managed::Writer;
use crate::patch::PatchKind;
use crate::registry::ResourceInfo;
use crate::route::Route;
use crate::state::State;
use crate::write::{self, Ownership};

/// The request as far as a dry run needs it.
pub struct DryRun<'a> {
    pub method: &'a Method,
    /// Content type (a patch's kind).
    pub ct: &'a str,
    pub body: Value,
    pub who: &'a Writer,
}

/// The status code and object the write would have answered.
pub fn run(state: &State, route: &Route, r: DryRun<'_>) -> Result<(u16, Value), ApiError> {
    let mut sandbox = state.store().sandbox();
    let st = &mut sandbox;
    let find = |res: usize| -> Result<&ResourceInfo, ApiError> {
        state.registry.get(res).ok_or_else(ApiError::no_route)
    };
    match (route, r.method) {
        (Route::Collection { res, ns }, &Method::POST) => {
            let info = find(*res)?;
            let ns = ns.as_deref().unwrap_or_default();
            let obj = write::create(st, info, ns, r.body, Ownership::Update(r.who))?;
            Ok((201, obj))
        }
        (Route::Object { res, ns, name, sub }, m) => {
            let info = find(*res)?;
            let status = match sub.as_deref() {
                None => false,
                Some("status") if info.status_subresource => true,
                Some(_) => return Err(unsupported()),
            };
            match *m {
                Method::PUT => {
                    let v = write::update(st, info, ns, name, r.body, status, r.who)?;
                    Ok((200, v))
                }
                Method::PATCH => {
                    let kind = PatchKind::from_content_type(r.ct)?;
                    write::patch(st, info, ns, name, kind, r.body, status, r.who)
                }
                Method::DELETE if !status => {
                    let opts = DeleteOptions::from_body(&r.body);
                    let graceful = state.options.graceful_pod_deletion;
                    Ok((200, delete::delete(st, info, ns, name, &opts, graceful)?))
                }
                _ => Err(unsupported()),
            }
        }
        _ => Err(unsupported()),
    }
}

fn unsupported() -> ApiError {
    ApiError::bad_request("dryRun is served for create, update, patch and delete")
}
