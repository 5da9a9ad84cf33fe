//! Kerf's RBAC (infra/rbac/*.yaml) read as data, and real requests that ask the real
//! authorizer. [`identities`] turns each function's ClusterRole/Role and bindings into the
//! grants its Kubernetes group holds; [`Identity::allows`] is what RBAC's rules say about a
//! request; [`send`] makes the request as a client of that identity, without side effects
//! (writes are dry runs, reads and deletes of objects that do not exist), so any answer but
//! 403 means the authorizer let it through.

use kube::Client;
use kube::api::{DeleteParams, GetParams, ListParams, Patch, PatchParams, PostParams};
use kube::core::Request;
use kube::discovery::{Discovery, Scope};
use serde_json::{Value, json};

use super::api::status;

/// One verb on one resource (`pods`, or `pods/eviction`) in one API group, in a namespace or
/// cluster-wide, on one named object or none.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Probe {
    pub verb: String,
    pub group: String,
    pub resource: String,
    pub namespace: Option<String>,
    pub name: Option<String>,
}

impl std::fmt::Display for Probe {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let g = if self.group.is_empty() {
            "core"
        } else {
            &self.group
        };
        write!(f, "{} {}.{}", self.verb, self.resource, g)?;
        if let Some(n) = &self.name {
            write!(f, " {n:?}")?;
        }
        match &self.namespace {
            Some(ns) => write!(f, " in {ns}"),
            None => write!(f, " (cluster)"),
        }
    }
}

/// One rule's grant of a verb on a resource (`namespace` None: a ClusterRole's).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Grant {
    pub verb: String,
    pub group: String,
    pub resource: String,
    pub names: Vec<String>,
    pub namespace: Option<String>,
}

/// A function's Kubernetes identity and what its RBAC grants it.
#[derive(Debug, Clone)]
pub struct Identity {
    /// The file's name without `.yaml` (`provisioner`, ...).
    pub function: String,
    pub user: String,
    pub groups: Vec<String>,
    pub grants: Vec<Grant>,
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .into_iter()
        .flatten()
        .filter_map(|s| s.as_str().map(str::to_string))
        .collect()
}

/// The identities of the RBAC files: `(file stem, documents)` each, one identity per file
/// with bindings; its user is the bound User, or `kerf-<stem>` when only Groups are bound.
pub fn identities(files: &[(String, Vec<Value>)]) -> Vec<Identity> {
    let mut out = Vec::new();
    for (stem, docs) in files {
        let role = |kind: &str, name: &str, ns: Option<&str>| {
            docs.iter().find(|d| {
                d["kind"] == kind
                    && d["metadata"]["name"] == name
                    && d["metadata"]["namespace"].as_str() == ns
            })
        };
        let mut id = Identity {
            function: stem.clone(),
            user: format!("kerf-{stem}"),
            groups: Vec::new(),
            grants: Vec::new(),
        };
        let bindings = docs.iter().filter(|d| {
            matches!(
                d["kind"].as_str(),
                Some("ClusterRoleBinding" | "RoleBinding")
            )
        });
        for b in bindings {
            for s in b["subjects"].as_array().into_iter().flatten() {
                let name = s["name"].as_str().unwrap_or_default().to_string();
                match s["kind"].as_str() {
                    Some("Group") if !id.groups.contains(&name) => id.groups.push(name),
                    Some("User") => id.user = name,
                    _ => {}
                }
            }
            let ns = b["metadata"]["namespace"].as_str();
            let kind = b["roleRef"]["kind"].as_str().unwrap_or_default();
            let name = b["roleRef"]["name"].as_str().unwrap_or_default();
            let role_ns = if kind == "Role" { ns } else { None };
            let role = role(kind, name, role_ns)
                .unwrap_or_else(|| panic!("{stem}: {kind} {name} is bound but not defined"));
            for rule in role["rules"].as_array().into_iter().flatten() {
                for group in strings(&rule["apiGroups"]) {
                    for resource in strings(&rule["resources"]) {
                        for verb in strings(&rule["verbs"]) {
                            id.grants.push(Grant {
                                verb,
                                group: group.clone(),
                                resource: resource.clone(),
                                names: strings(&rule["resourceNames"]),
                                namespace: ns.map(str::to_string),
                            });
                        }
                    }
                }
            }
        }
        if !id.grants.is_empty() {
            out.push(id);
        }
    }
    out
}

impl Identity {
    /// Whether RBAC's rules let this identity make `p` (no wildcards in Kerf's rules).
    pub fn allows(&self, p: &Probe) -> bool {
        self.grants.iter().any(|g| {
            g.verb == p.verb
                && g.group == p.group
                && g.resource == p.resource
                && (g.namespace.is_none() || g.namespace == p.namespace)
                && (g.names.is_empty() || p.name.as_ref().is_some_and(|n| g.names.contains(n)))
        })
    }
}

/// Where resources are served: version, kind and scope of `(group, plural)`.
pub struct Resources(Discovery);

impl std::fmt::Debug for Resources {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Resources").finish_non_exhaustive()
    }
}

impl Resources {
    /// Discovers every group of the server.
    pub async fn discover(client: &Client) -> Resources {
        Resources(Discovery::new(client.clone()).run().await.unwrap())
    }

    /// `(version, kind, namespaced)` of a resource (a subresource's parent).
    pub fn find(&self, group: &str, resource: &str) -> (String, String, bool) {
        let plural = resource.split('/').next().unwrap_or_default();
        for g in self.0.groups() {
            if g.name() != group {
                continue;
            }
            // Every version, the preferred first: NodeOverlays are served at karpenter.sh's
            // v1alpha1 only.
            let found = g
                .versions()
                .flat_map(|v| g.versioned_resources(v))
                .find(|(ar, _)| ar.plural == plural);
            if let Some((ar, caps)) = found {
                return (ar.version, ar.kind, caps.scope == Scope::Namespaced);
            }
        }
        panic!("resource {resource} of group {group:?} is not served")
    }
}

/// The collection URL of a probe's resource.
fn collection(r: &Resources, p: &Probe) -> String {
    let (version, _, namespaced) = r.find(&p.group, &p.resource);
    let plural = p.resource.split('/').next().unwrap_or_default();
    let base = if p.group.is_empty() {
        format!("/api/{version}")
    } else {
        format!("/apis/{}/{version}", p.group)
    };
    match (&p.namespace, namespaced) {
        (Some(ns), true) => format!("{base}/namespaces/{ns}/{plural}"),
        _ => format!("{base}/{plural}"),
    }
}

/// The name a probe of a verb on one object uses when the probe names none.
pub const ABSENT: &str = "kerf-rbac-probe-absent";

/// Makes the request of `p` through `client`: the Status of its failure, or `None`.
pub async fn send(client: &Client, r: &Resources, p: &Probe) -> Option<kube::core::Status> {
    let (version, kind, _) = r.find(&p.group, &p.resource);
    let api_version = if p.group.is_empty() {
        version
    } else {
        format!("{}/{version}", p.group)
    };
    let name = p.name.as_deref().unwrap_or(ABSENT);
    let sub = p.resource.split_once('/').map(|(_, s)| s);
    let req = Request::new(collection(r, p));
    let dry = PostParams {
        dry_run: true,
        ..PostParams::default()
    };
    let patch_params = PatchParams {
        dry_run: true,
        ..PatchParams::default()
    };
    let mut body = json!({"apiVersion": api_version, "kind": kind, "metadata": {"name": name}});
    if let Some(ns) = &p.namespace {
        body["metadata"]["namespace"] = json!(ns);
    }
    if sub == Some("eviction") {
        body = json!({"apiVersion": "policy/v1", "kind": "Eviction",
            "metadata": {"name": name}, "deleteOptions": {"dryRun": ["All"]}});
    }
    let bytes = serde_json::to_vec(&body).unwrap();
    let empty = Patch::Merge(json!({}));
    let http = match (p.verb.as_str(), sub) {
        ("get", None) => req.get(name, &GetParams::default()),
        ("get", Some(s)) => req.get_subresource(s, name),
        ("list", _) => req.list(&ListParams::default().limit(1)),
        ("create", None) => req.create(&dry, bytes),
        ("create", Some(s)) => req.create_subresource(s, name, &dry, bytes),
        ("update", None) => req.replace(name, &dry, bytes),
        ("update", Some(s)) => req.replace_subresource(s, name, &dry, bytes),
        ("patch", None) => req.patch(name, &patch_params, &empty),
        ("patch", Some(s)) => req.patch_subresource(s, name, &patch_params, &empty),
        ("delete", _) => req.delete(
            name,
            &DeleteParams {
                dry_run: true,
                ..DeleteParams::default()
            },
        ),
        (verb, _) => panic!("no request for verb {verb} ({p})"),
    }
    .unwrap();
    client.request_text(http).await.err().map(status)
}

/// Whether a failure is the authorizer's refusal (not NodeRestriction's or another
/// admission plugin's 403).
pub fn forbidden_by_rbac(s: &Option<kube::core::Status>) -> bool {
    s.as_ref()
        .is_some_and(|s| s.code == 403 && s.message.contains(" cannot "))
}
