//! The HTTP front: one axum fallback handler that routes, injects faults, dispatches to the
//! read/write/watch/eviction logic and renders replies and Status errors.

use crate::binding;
use crate::delete::{self, DeleteOptions};
use crate::dryrun::{self, DryRun};
use crate::error::ApiError;
use crate::managed::Writer;
use crate::patch::PatchKind;
use crate::query::Query;
use crate::registry::ResourceInfo;
use crate::request::{admitted, dry_run, parse_body, strict};
use crate::route::{self, Route};
use crate::state::{Exchange, RequestRecord, State};
use crate::write::{self, Ownership};
use crate::{eviction, read, watch};
use axum::body::Body;
use axum::extract::Request;
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::response::Response;
use serde_json::Value;
use std::sync::Arc;

/// What a handler produced.
enum Reply {
    Json(u16, Value),
    /// Plain text (the health endpoints).
    Text(&'static str),
    Raw(u16, Vec<u8>),
    /// The OpenAPI v2 document as protobuf (what kubectl asks for).
    Proto(Vec<u8>),
    Stream(Body),
}

fn json_response(code: u16, bytes: Vec<u8>) -> Response {
    let mut r = Response::new(Body::from(bytes));
    *r.status_mut() = StatusCode::from_u16(code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    r
}

fn error_response(e: &ApiError) -> Response {
    let mut r = json_response(e.code, e.body.to_string().into_bytes());
    if let Some(s) = e.retry_after
        && let Ok(v) = HeaderValue::from_str(&s.to_string())
    {
        r.headers_mut().insert(header::RETRY_AFTER, v);
    }
    r
}

/// The single entry point for every request.
pub async fn handle(state: Arc<State>, req: Request) -> Response {
    let latency = state.latency_us.load(std::sync::atomic::Ordering::Relaxed);
    if latency > 0 {
        tokio::time::sleep(std::time::Duration::from_micros(latency)).await;
    }
    let method = req.method().clone();
    let uri = req.uri().to_string();
    let auth = req
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    let ct = req
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_string();
    let user_agent = req
        .headers()
        .get(header::USER_AGENT)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    let path = req.uri().path().to_string();
    let accept = req
        .headers()
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_string();
    let table = crate::table::wanted(&accept);
    let protobuf = accept.contains("protobuf");
    let query = Query::parse(req.uri().query());
    let who = Writer {
        field_manager: query.field_manager.clone(),
        user_agent,
        force: query.force,
    };
    let keep = state
        .record_bodies
        .load(std::sync::atomic::Ordering::Relaxed);
    let mut sent = bytes::Bytes::new();
    let injected = state
        .take_fault(method.as_str(), &path)
        .or_else(|| state.take_flaky(method.as_str(), &path, auth.as_deref()));
    let result = match injected {
        Some(e) => Err(e),
        None => match axum::body::to_bytes(req.into_body(), 64 << 20)
            .await
            .inspect(|body| {
                if keep {
                    sent = body.clone();
                }
            }) {
            Ok(body) => {
                match admitted(
                    &state,
                    &path,
                    (&method, dry_run(&query, &method, &body)),
                    &ct,
                    &body,
                )
                .await
                {
                    Ok(Some((m, mct, b))) => {
                        let r = Req {
                            table,
                            protobuf,
                            method: &m,
                            q: &query,
                            ct: mct,
                            body: &b,
                            who: &who,
                        };
                        dispatch(&state, &path, &r)
                    }
                    Ok(None) => {
                        let r = Req {
                            table,
                            protobuf,
                            method: &method,
                            q: &query,
                            ct: &ct,
                            body: &body,
                            who: &who,
                        };
                        dispatch(&state, &path, &r)
                    }
                    Err(e) => Err(e),
                }
            }
            Err(e) => Err(ApiError::bad_request(format!("reading body: {e}"))),
        },
    };
    let mut replied = bytes::Bytes::new();
    let mut json = |code: u16, b: Vec<u8>| {
        if keep {
            replied = bytes::Bytes::from(b.clone());
        }
        json_response(code, b)
    };
    let response = match result {
        Ok(Reply::Json(code, v)) => json(code, v.to_string().into_bytes()),
        Ok(Reply::Raw(code, b)) => json(code, b),
        Ok(Reply::Text(t)) => {
            let mut r = Response::new(Body::from(t.as_bytes().to_vec()));
            r.headers_mut().insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static("text/plain; charset=utf-8"),
            );
            r
        }
        Ok(Reply::Proto(b)) => {
            let mut r = Response::new(Body::from(b));
            r.headers_mut().insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static(crate::openapi::proto::MEDIA_TYPE),
            );
            r
        }
        Ok(Reply::Stream(body)) => {
            let mut r = Response::new(body);
            r.headers_mut().insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/json"),
            );
            r
        }
        Err(e) => {
            if keep {
                replied = bytes::Bytes::from(e.body.to_string());
            }
            error_response(&e)
        }
    };
    let status = response.status().as_u16();
    let exchange = keep.then(|| {
        Box::new(Exchange {
            content_type: ct,
            accept,
            body: sent,
            response: replied,
        })
    });
    state.record(RequestRecord {
        method: method.to_string(),
        uri,
        authorization: auth,
        status,
        exchange,
    });
    response
}

/// One request's method, query, content type, body and writer.
struct Req<'a> {
    method: &'a Method,
    /// The client asked for a server-side Table (`kubectl get`).
    table: bool,
    /// The client accepts protobuf (only the OpenAPI v2 document is served as such).
    protobuf: bool,
    q: &'a Query,
    ct: &'a str,
    body: &'a [u8],
    who: &'a Writer,
}

fn dispatch(state: &State, path: &str, r: &Req<'_>) -> Result<Reply, ApiError> {
    let method = r.method;
    let route = route::resolve(&state.registry, path)?;
    if r.q.strict {
        strict(state, &route, method, r.body)?;
    }
    if dry_run(r.q, method, r.body) {
        let dry = DryRun {
            method,
            ct: r.ct,
            body: parse_body(r.body)?,
            who: r.who,
        };
        let (code, v) = dryrun::run(state, &route, dry)?;
        return Ok(Reply::Json(code, v));
    }
    match route {
        Route::Doc(v) if method == Method::GET => Ok(Reply::Json(200, v)),
        Route::OpenApiV2 if method == Method::GET => {
            let doc = crate::openapi::v2(&state.registry).map_err(ApiError::internal)?;
            Ok(if r.protobuf {
                Reply::Proto(crate::openapi::proto::document(&doc))
            } else {
                Reply::Json(200, doc)
            })
        }
        Route::Health if method == Method::GET => Ok(Reply::Text("ok")),
        Route::Doc(_) | Route::OpenApiV2 | Route::Health => Err(ApiError::method_not_allowed()),
        Route::Collection { res, ns } => {
            let info = state.registry.get(res).ok_or_else(ApiError::no_route)?;
            collection(state, info, ns.as_deref(), r)
        }
        Route::Object { res, ns, name, sub } => {
            let info = state.registry.get(res).ok_or_else(ApiError::no_route)?;
            let target = Target {
                info,
                ns: &ns,
                name: &name,
            };
            object(state, &target, sub.as_deref(), r)
        }
    }
}

fn collection(
    state: &State,
    info: &ResourceInfo,
    ns: Option<&str>,
    r: &Req<'_>,
) -> Result<Reply, ApiError> {
    let (q, body) = (r.q, r.body);
    match *r.method {
        Method::GET if q.watch => {
            let stream = watch::start(state, info, ns, q, r.table)?;
            Ok(Reply::Stream(Body::from_stream(stream)))
        }
        Method::GET => {
            let st = state.store();
            let page = read::list(&st, info, ns, q)?;
            if r.table {
                let now = (st.clock().0)();
                let t = crate::table::table(
                    info,
                    page.items(),
                    page.resource_version(),
                    now,
                    q.include_object,
                );
                return Ok(Reply::Json(200, t));
            }
            Ok(Reply::Raw(200, page.to_bytes(info)))
        }
        Method::POST if info.namespaced && ns.is_none() => Err(ApiError::method_not_allowed()),
        Method::POST => {
            let ns = ns.unwrap_or_default();
            let own = Ownership::Update(r.who);
            let obj = write::create(&mut state.store(), info, ns, parse_body(body)?, own)?;
            Ok(Reply::Json(201, obj))
        }
        _ => Err(ApiError::method_not_allowed()),
    }
}

/// One addressed object.
struct Target<'a> {
    info: &'a ResourceInfo,
    ns: &'a str,
    name: &'a str,
}

fn object(
    state: &State,
    t: &Target<'_>,
    sub: Option<&str>,
    r: &Req<'_>,
) -> Result<Reply, ApiError> {
    let (method, body) = (r.method, r.body);
    let status_sub = match sub {
        None => false,
        Some("status") if t.info.status_subresource => true,
        Some("eviction")
            if t.info.group.is_empty() && t.info.plural == "pods" && method == Method::POST =>
        {
            let how = eviction::Evictions {
                graceful: state.options.graceful_pod_deletion,
                stored_status: state.options.disruption_controller,
            };
            let v = eviction::evict(
                &mut state.store(),
                t.info,
                t.ns,
                t.name,
                &parse_body(body)?,
                how,
            )?;
            return Ok(Reply::Json(201, v));
        }
        Some("binding")
            if t.info.group.is_empty() && t.info.plural == "pods" && method == Method::POST =>
        {
            let v = binding::bind(&mut state.store(), t.info, t.ns, t.name, &parse_body(body)?)?;
            return Ok(Reply::Json(201, v));
        }
        Some("scale") if crate::scale::scalable(t.info) => {
            let v = crate::scale::scale(
                &mut state.store(),
                t.info,
                (t.ns, t.name),
                method,
                r.ct,
                parse_body(body)?,
                r.who,
            )?;
            return Ok(Reply::Json(200, v));
        }
        Some(_) => return Err(ApiError::no_route()),
    };
    let mut st = state.store();
    match *method {
        Method::GET if r.table => {
            let obj = read::get(&st, t.info, t.ns, t.name)?;
            let now = (st.clock().0)();
            let table = crate::table::table(t.info, &[obj], st.rv(), now, r.q.include_object);
            Ok(Reply::Json(200, table))
        }
        Method::GET => Ok(Reply::Json(
            200,
            (*read::get(&st, t.info, t.ns, t.name)?).clone(),
        )),
        Method::PUT => {
            let body = parse_body(body)?;
            let v = write::update(&mut st, t.info, t.ns, t.name, body, status_sub, r.who)?;
            Ok(Reply::Json(200, v))
        }
        Method::PATCH => {
            let kind = PatchKind::from_content_type(r.ct)?;
            let (code, v) = write::patch(
                &mut st,
                t.info,
                t.ns,
                t.name,
                kind,
                parse_body(body)?,
                status_sub,
                r.who,
            )?;
            Ok(Reply::Json(code, v))
        }
        Method::DELETE if !status_sub => {
            let opts = DeleteOptions::from_body(&parse_body(body)?);
            let graceful = state.options.graceful_pod_deletion;
            Ok(Reply::Json(
                200,
                delete::delete(&mut st, t.info, t.ns, t.name, &opts, graceful)?,
            ))
        }
        _ => Err(ApiError::method_not_allowed()),
    }
}
