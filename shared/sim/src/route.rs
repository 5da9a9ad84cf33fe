//! URL routing: `/api/v1/...` and `/apis/{group}/{version}/...` to resources, objects and
//! subresources, plus `/version` and discovery documents.

use crate::error::ApiError;
use crate::registry::{Registry, ResourceInfo};
use serde_json::{Value, json};

/// What a path addresses.
#[derive(Debug, Clone, PartialEq)]
pub enum Route {
    /// A static JSON document (`/version`, discovery, OpenAPI v3).
    Doc(Value),
    /// The OpenAPI v2 document (JSON or protobuf, as the client accepts).
    OpenApiV2,
    /// `/readyz`, `/livez`, `/healthz`: `ok`, as kube-apiserver answers them.
    Health,
    /// A collection: list, watch, create.
    Collection {
        /// Index in the registry.
        res: usize,
        /// Namespace, `None` for cluster-scoped or all-namespaces.
        ns: Option<String>,
    },
    /// One object or one of its subresources.
    Object {
        /// Index in the registry.
        res: usize,
        /// Namespace ("" for cluster-scoped).
        ns: String,
        /// Object name.
        name: String,
        /// `status`, `eviction`, ...
        sub: Option<String>,
    },
}

/// Resolves a path.
pub fn resolve(reg: &Registry, path: &str) -> Result<Route, ApiError> {
    let segs: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
    match segs.as_slice() {
        ["version"] => Ok(Route::Doc(version())),
        ["readyz" | "livez" | "healthz"] => Ok(Route::Health),
        ["api"] => Ok(Route::Doc(
            json!({"kind": "APIVersions", "versions": ["v1"],
            "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": "127.0.0.1"}]}),
        )),
        ["apis"] => Ok(Route::Doc(groups(reg))),
        ["openapi", "v2"] => Ok(Route::OpenApiV2),
        ["openapi", "v3"] => crate::openapi::v3_root(reg)
            .map(Route::Doc)
            .map_err(ApiError::internal),
        ["openapi", "v3", gv @ ..] => crate::openapi::v3(reg, &gv.join("/"))
            .map_err(ApiError::internal)?
            .map(Route::Doc)
            .ok_or_else(ApiError::no_route),
        ["api", "v1"] => Ok(Route::Doc(resources(reg, "", "v1"))),
        ["apis", g, v] => Ok(Route::Doc(resources(reg, g, v))),
        ["api", "v1", rest @ ..] => resolve_rest(reg, "", "v1", rest),
        ["apis", g, v, rest @ ..] => resolve_rest(reg, g, v, rest),
        _ => Err(ApiError::no_route()),
    }
}

fn resolve_rest(reg: &Registry, g: &str, v: &str, rest: &[&str]) -> Result<Route, ApiError> {
    let find = |plural: &str| reg.find(g, v, plural).ok_or_else(ApiError::no_route);
    let namespaced_path = rest.first() == Some(&"namespaces")
        && rest.len() >= 3
        && !(rest.len() == 3 && matches!(rest[2], "status" | "finalize"));
    let (ns, rest) = if namespaced_path {
        (Some(rest[1]), &rest[2..])
    } else {
        (None, rest)
    };
    let res = find(rest.first().copied().unwrap_or_default())?;
    let info = reg.get(res).ok_or_else(ApiError::no_route)?;
    if ns.is_some() && !info.namespaced {
        return Err(ApiError::no_route());
    }
    match rest {
        [_] => Ok(Route::Collection {
            res,
            ns: ns.map(str::to_string),
        }),
        [_, ..] if ns.is_none() && info.namespaced => Err(ApiError::no_route()),
        [_, name] => Ok(object(res, ns, name, None)),
        [_, name, sub] => Ok(object(res, ns, name, Some(sub))),
        _ => Err(ApiError::no_route()),
    }
}

fn object(res: usize, ns: Option<&str>, name: &str, sub: Option<&str>) -> Route {
    Route::Object {
        res,
        ns: ns.unwrap_or_default().to_string(),
        name: name.to_string(),
        sub: sub.map(str::to_string),
    }
}

fn version() -> Value {
    json!({"major": "1", "minor": "33", "gitVersion": "v1.33.0-kerf-sim", "gitCommit": "",
        "gitTreeState": "clean", "buildDate": "2026-01-01T00:00:00Z", "goVersion": "go1.24",
        "compiler": "gc", "platform": "linux/amd64"})
}

fn groups(reg: &Registry) -> Value {
    let mut names: Vec<(&str, &str)> = Vec::new();
    for r in reg.all().iter().filter(|r| !r.group.is_empty()) {
        if !names.contains(&(r.group.as_str(), r.version.as_str())) {
            names.push((&r.group, &r.version));
        }
    }
    let groups: Vec<Value> = names
        .iter()
        .map(|(g, v)| {
            let gv = json!({"groupVersion": format!("{g}/{v}"), "version": v});
            json!({"name": g, "versions": [gv.clone()], "preferredVersion": gv})
        })
        .collect();
    json!({"kind": "APIGroupList", "apiVersion": "v1", "groups": groups})
}

fn resource_doc(r: &ResourceInfo) -> Value {
    let mut doc = json!({"name": r.plural, "singularName": r.kind.to_lowercase(),
        "namespaced": r.namespaced, "kind": r.kind,
        "verbs": ["create", "delete", "get", "list", "patch", "update", "watch"]});
    if !r.short_names.is_empty() {
        doc["shortNames"] = json!(r.short_names);
    }
    doc
}

fn resources(reg: &Registry, g: &str, v: &str) -> Value {
    let mut list = Vec::new();
    for r in reg.all().iter().filter(|r| r.group == g && r.version == v) {
        list.push(resource_doc(r));
        if crate::scale::scalable(r) {
            list.push(
                json!({"name": format!("{}/scale", r.plural), "singularName": "",
                "namespaced": r.namespaced, "kind": "Scale", "group": "autoscaling",
                "version": "v1", "verbs": ["get", "patch", "update"]}),
            );
        }
        if r.status_subresource {
            list.push(
                json!({"name": format!("{}/status", r.plural), "singularName": "",
                "namespaced": r.namespaced, "kind": r.kind, "verbs": ["get", "patch", "update"]}),
            );
        }
    }
    let gv = if g.is_empty() {
        v.to_string()
    } else {
        format!("{g}/{v}")
    };
    json!({"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": gv, "resources": list})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn discovery_carries_the_short_names_kubectl_accepts() {
        let mut reg = Registry::builtin();
        for crd in kerf_api::crds::all() {
            reg.add_crd(&serde_json::to_value(&crd).unwrap());
        }
        let short = |g: &str, v: &str, plural: &str| {
            let list = resources(&reg, g, v);
            list["resources"]
                .as_array()
                .unwrap()
                .iter()
                .find(|r| r["name"] == plural)
                .map(|r| r["shortNames"].clone())
                .unwrap()
        };
        assert_eq!(short("apps", "v1", "deployments"), json!(["deploy"]));
        assert_eq!(short("", "v1", "pods"), json!(["po"]));
        assert_eq!(
            short("policy", "v1", "poddisruptionbudgets"),
            json!(["pdb"])
        );
        assert_eq!(
            short("karpenter.k8s.aws", "v1", "ec2nodeclasses"),
            json!(["ec2nc", "ec2ncs"])
        );
        // No short name, no field (as kube-apiserver answers).
        assert!(short("coordination.k8s.io", "v1", "leases").is_null());
    }

    #[test]
    fn shapes() {
        let reg = Registry::builtin();
        let pods = reg.find("", "v1", "pods").unwrap();
        let ns = reg.find("", "v1", "namespaces").unwrap();
        assert_eq!(
            resolve(&reg, "/api/v1/namespaces/default/pods/p/eviction").unwrap(),
            Route::Object {
                res: pods,
                ns: "default".into(),
                name: "p".into(),
                sub: Some("eviction".into())
            }
        );
        assert_eq!(
            resolve(&reg, "/api/v1/pods").unwrap(),
            Route::Collection {
                res: pods,
                ns: None
            }
        );
        assert_eq!(
            resolve(&reg, "/api/v1/namespaces/kube-system").unwrap(),
            Route::Object {
                res: ns,
                ns: String::new(),
                name: "kube-system".into(),
                sub: None
            }
        );
        assert!(resolve(&reg, "/api/v1/pods/p").is_err());
        assert!(resolve(&reg, "/api/v1/widgets").is_err());
    }
}
