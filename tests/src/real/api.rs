//! Writing manifests to an API server as `kubectl apply --server-side` does (the kind's API
//! found through discovery), and the 4xx `Status` of a failed call.

use kube::Client;
use kube::api::{Api, DynamicObject, GroupVersionKind, Patch, PatchParams};
use kube::core::Status;
use serde_json::Value;

/// The API of a document's kind (namespaced kinds in its namespace, `default` if none).
pub async fn api_for(client: &Client, doc: &Value) -> Result<Api<DynamicObject>, kube::Error> {
    let api_version = doc["apiVersion"].as_str().unwrap_or_default();
    let kind = doc["kind"].as_str().unwrap_or_default();
    let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
    let gvk = GroupVersionKind::gvk(group, version, kind);
    let (ar, caps) = kube::discovery::pinned_kind(client, &gvk).await?;
    let ns = doc["metadata"]["namespace"].as_str().unwrap_or("default");
    Ok(if caps.scope == kube::discovery::Scope::Namespaced {
        Api::namespaced_with(client.clone(), ns, &ar)
    } else {
        Api::all_with(client.clone(), &ar)
    })
}

/// Server-side applies `doc` as field manager `kubectl` (forced), or only validates it when
/// `dry_run`.
pub async fn apply(
    client: &Client,
    doc: &Value,
    dry_run: bool,
) -> Result<DynamicObject, kube::Error> {
    let api = api_for(client, doc).await?;
    let name = doc["metadata"]["name"].as_str().unwrap_or_default();
    let mut pp = PatchParams::apply("kubectl").force();
    pp.dry_run = dry_run;
    api.patch(name, &pp, &Patch::Apply(doc)).await
}

/// Applies every document in order; panics naming the first one rejected.
pub async fn apply_all(client: &Client, docs: &[Value]) {
    for d in docs {
        if let Err(e) = apply(client, d, false).await {
            panic!("apply {} {}: {e}", d["kind"], d["metadata"]["name"]);
        }
    }
}

/// The Status of a failed API call (a transport failure becomes a code-0 Status).
pub fn status(e: kube::Error) -> Status {
    match e {
        kube::Error::Api(s) => *s,
        other => Status::failure(&other.to_string(), "ClientError"),
    }
}
