//! Builds the engine's snapshot from `kerf plan` inputs: recognised kinds are converted,
//! workloads without pods are expanded, every NodePool gets its node class's catalog.

use std::collections::BTreeMap;
use std::sync::Arc;

use k8s_openapi::api::{
    apps::v1 as apps, batch::v1 as batch, core::v1 as core, policy::v1 as policy,
    storage::v1 as storage,
};
use kerf_api::v1 as karpenter;
use kerf_catalog::Catalog;
use kerf_catalog::settings::NodeClassSettings;
use kerf_engine::Snapshot;

use crate::convert::volumes::{ClaimRef, Storage, claim_refs, csi_limits};
use crate::convert::workload::{Workload, expand, has_pods};
use crate::convert::{cluster, pod, typed};
use crate::error::{CliError, FieldError, Locate, Location};
use crate::input::Doc;

/// Where instance types come from.
#[derive(Clone, Debug)]
pub enum CatalogSource {
    /// The bundled catalog of a region, adjusted per EC2NodeClass.
    Bundled { region: String },
    /// A `--catalog` file used as is for every pool.
    File(Arc<Catalog>),
}

/// A snapshot plus the warnings building it produced.
#[derive(Debug)]
pub struct Built {
    pub snapshot: Snapshot,
    pub warnings: Vec<String>,
}

#[derive(Default)]
struct Collected {
    pods: Vec<kerf_engine::model::Pod>,
    /// The claims each pod's volumes use (in `pods` order).
    claims: Vec<Vec<ClaimRef>>,
    storage: Storage,
    /// CSINode attach limits by node name.
    limits: BTreeMap<String, BTreeMap<String, u32>>,
    owners: Vec<(String, String, String)>,
    workloads: Vec<(Workload, Location)>,
    pools: Vec<(karpenter::NodePool, Location)>,
    classes: BTreeMap<String, (karpenter::EC2NodeClass, Location)>,
    overlays: Vec<(kerf_api::v1alpha1::NodeOverlay, Location)>,
}

/// Karpenter's feature gates that change how the input is read.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BuildOptions {
    /// The `NodeOverlay` gate: NodeOverlays in the input change prices and capacity.
    pub node_overlay: bool,
}

/// Converts every document; the first bad one is an error naming file, document and field.
pub fn build(docs: Vec<Doc>, source: &CatalogSource, now: i64) -> Result<Built, CliError> {
    build_with(docs, source, now, BuildOptions::default())
}

/// [`build`] with feature gates.
pub fn build_with(
    docs: Vec<Doc>,
    source: &CatalogSource,
    now: i64,
    opts: BuildOptions,
) -> Result<Built, CliError> {
    let mut snap = Snapshot {
        now,
        ..Default::default()
    };
    let mut c = Collected::default();
    let mut warnings = Vec::new();
    let mut docs = docs;
    for doc in &mut docs {
        doc.at.object = object_name(doc);
    }
    // The many objects of a dump (pods, nodes, NodeClaims) convert on every core; the first
    // error in document order is still the one reported.
    let early = crate::parallel::map(&docs, convert_early);
    for (doc, early) in docs.iter().zip(early) {
        match early {
            Some(e) => place(e?, &mut snap, &mut c),
            None => collect(doc, &mut snap, &mut c, &mut warnings)?,
        }
    }
    let all: Vec<Workload> = c.workloads.iter().map(|(w, _)| w.clone()).collect();
    for (w, at) in &c.workloads {
        let covered = w.kind == "ReplicaSet"
            && w.owner
                .as_ref()
                .is_some_and(|o| all.iter().any(|d| d.kind == "Deployment" && &d.name == o));
        if !covered && !has_pods(w, &c.owners, &all) {
            let pods = expand(w).map_err(|e| e.at(at))?;
            let spec = w.template.spec.as_ref();
            c.claims.extend(
                pods.iter()
                    .map(|p| spec.map(|s| claim_refs(s, &p.name)).unwrap_or_default()),
            );
            c.pods.extend(pods);
        }
    }
    let with_claims = c.claims.iter().filter(|r| !r.is_empty()).count();
    if with_claims > 0 && c.storage.is_empty() {
        warnings.push(format!(
            "{with_claims} pod(s) use persistent volume claims but the input has no \
             PersistentVolumeClaim, PersistentVolume or StorageClass: they wait for their claims \
             (dump them too: kubectl get …,pv,pvc,storageclass,csinode -A -o yaml)"
        ));
    }
    for (p, refs) in c.pods.iter_mut().zip(&c.claims) {
        if !refs.is_empty() {
            c.storage.resolve(p, refs);
        }
    }
    kerf_convert::volumes::apply_limits(&mut snap.nodes, &c.limits);
    snap.pods = c.pods;
    snap.node_pools = pools(&c.pools, &c.classes, source, &mut warnings)?;
    crate::overlays::apply(
        &mut snap.node_pools,
        &c.overlays,
        opts.node_overlay,
        &mut warnings,
    )?;
    for (nc, at) in c.classes.values() {
        snap.node_classes
            .push(kerf_convert::disruption::node_class(nc).map_err(|e| e.at(at))?);
    }
    Ok(Built {
        snapshot: snap,
        warnings,
    })
}

fn object_name(doc: &Doc) -> String {
    match doc.namespace.as_str() {
        "" => format!("{}/{}", doc.kind, doc.name),
        ns => format!("{}/{ns}/{}", doc.kind, doc.name),
    }
}

/// A pod, node or NodeClaim converted on its own.
enum Early {
    Pod(
        Box<kerf_engine::model::Pod>,
        Vec<(String, String, String)>,
        Vec<ClaimRef>,
    ),
    Node(Box<kerf_engine::model::Node>),
    NodeClaim(Box<kerf_engine::model::NodeClaim>),
}

/// Converts a pod, node or NodeClaim (`None` for any other kind).
fn convert_early(doc: &Doc) -> Option<Result<Early, CliError>> {
    let at = &doc.at;
    let converted = match (doc.api_version(), doc.kind()) {
        ("v1", "Pod") => typed::<core::Pod>(doc).and_then(|p| {
            let ns = p
                .metadata
                .namespace
                .clone()
                .unwrap_or_else(|| "default".into());
            let owners = p.metadata.owner_references.iter().flatten();
            let owners = owners
                .map(|o| (ns.clone(), o.kind.clone(), o.name.clone()))
                .collect();
            let model = pod::pod(&p).map_err(|e| e.at(at))?;
            let claims = p
                .spec
                .as_ref()
                .map(|s| claim_refs(s, &model.name))
                .unwrap_or_default();
            Ok(Early::Pod(Box::new(model), owners, claims))
        }),
        ("v1", "Node") => typed(doc).and_then(|n| {
            let model = cluster::node(&n).map_err(|e| e.at(at))?;
            Ok(Early::Node(Box::new(model)))
        }),
        ("karpenter.sh/v1", "NodeClaim") => typed(doc).and_then(|n| {
            let model = cluster::node_claim(&n).map_err(|e| e.at(at))?;
            Ok(Early::NodeClaim(Box::new(model)))
        }),
        _ => return None,
    };
    Some(converted)
}

fn place(e: Early, snap: &mut Snapshot, c: &mut Collected) {
    match e {
        Early::Pod(p, owners, claims) => {
            c.owners.extend(owners);
            c.pods.push(*p);
            c.claims.push(claims);
        }
        Early::Node(n) => snap.nodes.push(*n),
        Early::NodeClaim(n) => snap.node_claims.push(*n),
    }
}

fn collect(
    doc: &Doc,
    snap: &mut Snapshot,
    c: &mut Collected,
    warnings: &mut Vec<String>,
) -> Result<(), CliError> {
    let at = &doc.at;
    match (doc.api_version(), doc.kind()) {
        ("apps/v1", "DaemonSet") => snap
            .daemon_sets
            .push(cluster::daemon_set(&typed(doc)?).map_err(|e| e.at(at))?),
        ("apps/v1", "Deployment") => {
            let d: apps::Deployment = typed(doc)?;
            let s = d.spec;
            c.workloads.push((
                workload(
                    "Deployment",
                    &d.metadata,
                    s.replicas.unwrap_or(1),
                    s.template,
                    None,
                ),
                at.clone(),
            ));
        }
        ("apps/v1", "ReplicaSet") => {
            let r: apps::ReplicaSet = typed(doc)?;
            let owner = pod::owner(&r.metadata, "Deployment");
            let s = r.spec;
            let t = s.template.unwrap_or_default();
            c.workloads.push((
                workload("ReplicaSet", &r.metadata, s.replicas.unwrap_or(1), t, owner),
                at.clone(),
            ));
        }
        ("apps/v1", "StatefulSet") => {
            let s: apps::StatefulSet = typed(doc)?;
            let spec = s.spec;
            c.workloads.push((
                workload(
                    "StatefulSet",
                    &s.metadata,
                    spec.replicas.unwrap_or(1),
                    spec.template,
                    None,
                ),
                at.clone(),
            ));
        }
        ("batch/v1", "Job") => {
            let j: batch::Job = typed(doc)?;
            let spec = j
                .spec
                .ok_or_else(|| FieldError::new("spec", "missing").at(at))?;
            c.workloads.push((
                workload(
                    "Job",
                    &j.metadata,
                    spec.parallelism.unwrap_or(1),
                    spec.template,
                    None,
                ),
                at.clone(),
            ));
        }
        ("v1", "Namespace") => {
            let ns: core::Namespace = typed(doc)?;
            snap.namespaces.insert(
                ns.metadata.name.clone().unwrap_or_default(),
                ns.metadata.labels.clone().unwrap_or_default(),
            );
        }
        ("policy/v1", "PodDisruptionBudget") => {
            let b: policy::PodDisruptionBudget = typed(doc)?;
            snap.pdbs
                .push(kerf_convert::disruption::pdb(&b).map_err(|e| e.at(at))?);
        }
        ("karpenter.sh/v1", "NodePool") => c.pools.push((typed(doc)?, at.clone())),
        ("karpenter.sh/v1alpha1", "NodeOverlay") => c.overlays.push((typed(doc)?, at.clone())),
        ("v1", "PersistentVolumeClaim") => {
            let pvc: core::PersistentVolumeClaim = typed(doc)?;
            c.storage.add_claim(&pvc).map_err(|e| e.at(at))?;
        }
        ("v1", "PersistentVolume") => {
            let pv: core::PersistentVolume = typed(doc)?;
            c.storage.add_volume(&pv).map_err(|e| e.at(at))?;
        }
        ("storage.k8s.io/v1", "StorageClass") => {
            let sc: storage::StorageClass = typed(doc)?;
            c.storage.add_class(&sc).map_err(|e| e.at(at))?;
        }
        ("storage.k8s.io/v1", "CSINode") => {
            let cn: storage::CSINode = typed(doc)?;
            let (node, limits) = csi_limits(&cn).map_err(|e| e.at(at))?;
            c.limits.insert(node, limits);
        }
        ("karpenter.k8s.aws/v1", "EC2NodeClass") => {
            let nc: karpenter::EC2NodeClass = typed(doc)?;
            c.classes.insert(
                nc.metadata.name.clone().unwrap_or_default(),
                (nc, at.clone()),
            );
        }
        (
            api @ ("karpenter.sh/v1alpha5" | "karpenter.sh/v1beta1"),
            kind @ ("Provisioner" | "NodePool"),
        )
        | (
            api @ ("karpenter.k8s.aws/v1alpha1" | "karpenter.k8s.aws/v1beta1"),
            kind @ ("AWSNodeTemplate" | "EC2NodeClass"),
        ) => warnings.push(format!(
            "{}: {api} {kind} is Karpenter's pre-v1 API and plans nothing: convert it with \
             `kerf migrate {}` and plan with the result",
            doc.at, doc.at.file
        )),
        (api, kind) => warnings.push(format!("{}: skipping unrecognised {api} {kind}", doc.at)),
    }
    Ok(())
}

fn workload(
    kind: &str,
    m: &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta,
    replicas: i32,
    template: core::PodTemplateSpec,
    owner: Option<String>,
) -> Workload {
    Workload {
        kind: kind.into(),
        namespace: m.namespace.clone().unwrap_or_else(|| "default".into()),
        name: m.name.clone().unwrap_or_default(),
        replicas,
        template,
        owner,
    }
}

fn pools(
    pools: &[(karpenter::NodePool, Location)],
    classes: &BTreeMap<String, (karpenter::EC2NodeClass, Location)>,
    source: &CatalogSource,
    warnings: &mut Vec<String>,
) -> Result<Vec<kerf_engine::model::NodePool>, CliError> {
    let mut cache: BTreeMap<String, Arc<Catalog>> = BTreeMap::new();
    let mut out = Vec::new();
    for (np, at) in pools {
        let class = &np.spec.template.spec.node_class_ref.name;
        let name = np.metadata.name.as_deref().unwrap_or_default();
        let missing =
            matches!(source, CatalogSource::Bundled { .. }) && !classes.contains_key(class);
        let unready = if missing {
            warnings.push(format!(
                "{at}: NodePool {name:?} is not ready: its EC2NodeClass {class:?} is not in the \
                 input, so it launches nothing (add the EC2NodeClass, or plan with --catalog)"
            ));
            Some(format!("EC2NodeClass {class:?} not found"))
        } else {
            not_ready(np)
        };
        let catalog = match (&unready, cache.get(class)) {
            (Some(_), _) => Arc::default(),
            (None, Some(c)) => c.clone(),
            (None, None) => {
                let c = catalog_for(class, classes, source)?;
                cache.insert(class.clone(), c.clone());
                c
            }
        };
        let pool = cluster::node_pool(np, catalog).map_err(|e| e.at(at))?;
        out.push(kerf_engine::model::NodePool { unready, ..pool });
    }
    Ok(out)
}

/// Why a NodePool from a cluster dump is not ready: its `Ready` condition false, with the
/// reason and message of the conditions that hold it (a pool without status is taken as ready,
/// as a freshly applied one becomes).
fn not_ready(np: &karpenter::NodePool) -> Option<String> {
    let conds = &np.status.as_ref()?.conditions;
    let is_false = |c: &&karpenter::Condition| c.status == karpenter::ConditionStatus::False;
    conds.iter().filter(is_false).find(|c| c.type_ == "Ready")?;
    let causes: Vec<String> = conds
        .iter()
        .filter(is_false)
        .filter(|c| c.type_ != "Ready")
        .map(|c| format!("{} {}", c.type_, c.reason))
        .collect();
    Some(if causes.is_empty() {
        "its Ready condition is False".into()
    } else {
        format!("its Ready condition is False ({})", causes.join(", "))
    })
}

fn catalog_for(
    class: &str,
    classes: &BTreeMap<String, (karpenter::EC2NodeClass, Location)>,
    source: &CatalogSource,
) -> Result<Arc<Catalog>, CliError> {
    let region = match source {
        CatalogSource::File(c) => return Ok(c.clone()),
        CatalogSource::Bundled { region } => region,
    };
    let settings = match classes.get(class) {
        Some((nc, at)) => cluster::settings(nc).map_err(|e| e.at(at))?,
        None => NodeClassSettings::default(),
    };
    kerf_catalog::bundled::bundled(region, &settings)
        .map(Arc::new)
        .map_err(|e| CliError::Usage(e.to_string()))
}
