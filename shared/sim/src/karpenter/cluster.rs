//! A real control plane where the real Karpenter decides, driven by a scenario's steps like
//! Kerf's world: objects are applied as a user applies them (each EC2NodeClass played by a
//! KWOKNodeClass of the same name, which the NodePools reference), time is the wall clock,
//! and the cloud's changes reach Karpenter the way its KWOK provider allows: offerings and
//! spot prices through its instance-types file (it reads the file at start, so Karpenter is
//! restarted), an interruption as the instance going away two minutes later (the provider has
//! no interruption queue, so no warning reaches Karpenter); a new AMI has no equivalent.

use std::path::Path;
use std::sync::Arc;

use jiff::{SignedDuration, Timestamp};
use k8s_openapi::api::core::v1::{Event, Node, Pod};
use kerf_api::v1::{NodeClaim, NodePool};
use kerf_catalog::CapacityType;
use kube::Client;
use kube::api::{Api, DeleteParams, Patch, PatchParams};
use serde_json::json;

use super::process::{KarpenterProcess, Launch, Usage};
use super::setup::{KWOK_CLASS, cluster_err, install, translate, write_types};
use crate::scenario::{CloudChange, Cluster, ObjectRef, Snapshot, stranded};
use crate::world::cloud::NoCapacity;
use crate::world::import::{Imported, select};
use crate::world::prices::Prices;
use crate::world::server::list_all;
use crate::world::{WorldError, wiring};

/// How long after a warning EC2 takes a spot instance back.
const RECLAIM_AFTER: SignedDuration = SignedDuration::from_mins(2);

/// The real Karpenter on a control plane of its own.
pub struct KarpenterCluster {
    client: Client,
    process: KarpenterProcess,
    region: String,
    prices: Prices,
    no_capacity: Vec<NoCapacity>,
    tick: SignedDuration,
    /// How long an instance takes to become a Ready node (the KWOK node class's
    /// `nodeRegistrationDelay`), as long as the simulated EC2 and kubelet take on Kerf's side.
    boot: SignedDuration,
    /// Nodes whose instance goes away at a time (interrupted).
    reclaims: Vec<(Timestamp, String)>,
}

impl std::fmt::Debug for KarpenterCluster {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KarpenterCluster")
            .field("process", &self.process)
            .finish_non_exhaustive()
    }
}

impl KarpenterCluster {
    /// Installs Karpenter's CRDs (from `crds`) into the control plane of `launch.kubeconfig`,
    /// writes the instance-types file from Kerf's bundled catalog of `region` and starts
    /// Karpenter; its instances become Ready nodes `boot` after their launch.
    pub async fn start(
        launch: Launch,
        crds: &Path,
        region: &str,
        boot: SignedDuration,
    ) -> Result<KarpenterCluster, WorldError> {
        let (client, _) = crate::world::real::user_client(&launch.kubeconfig).await?;
        install(&client, crds).await?;
        let ns = json!({"apiVersion": "v1", "kind": "Namespace",
            "metadata": {"name": super::NAMESPACE}});
        wiring::apply(&client, &ns.to_string()).await?;
        std::fs::create_dir_all(&launch.dir).map_err(cluster_err)?;
        let (prices, no_capacity) = (Prices::default(), Vec::new());
        write_types(&launch.types_file(), region, &prices, &no_capacity)?;
        let process = KarpenterProcess::start(launch).await.map_err(cluster_err)?;
        Ok(KarpenterCluster {
            client,
            process,
            region: region.to_string(),
            prices,
            no_capacity,
            tick: SignedDuration::from_secs(1),
            boot,
            reclaims: Vec::new(),
        })
    }

    /// Karpenter's log.
    pub fn log(&self) -> std::path::PathBuf {
        self.process.log()
    }

    /// Rewrites the instance-types file and restarts Karpenter to read it.
    async fn retype(&mut self, file: &Path) -> Result<(), WorldError> {
        write_types(file, &self.region, &self.prices, &self.no_capacity)?;
        self.process.restart().await.map_err(cluster_err)
    }

    /// Takes back the instances whose time has come: their Nodes go away at once, as a
    /// KWOK provider's instance does when it stops.
    async fn reclaim_due(&mut self) -> Result<(), WorldError> {
        let now = Timestamp::now();
        let (due, later): (Vec<_>, Vec<_>) = self.reclaims.drain(..).partition(|(t, _)| *t <= now);
        self.reclaims = later;
        let nodes: Api<Node> = Api::all(self.client.clone());
        for (_, name) in due {
            let off = json!({"metadata": {"finalizers": null}});
            let gone = |e: &kube::Error| matches!(e, kube::Error::Api(s) if s.code == 404);
            match nodes
                .patch(&name, &PatchParams::default(), &Patch::Merge(&off))
                .await
            {
                Err(e) if !gone(&e) => return Err(e.into()),
                _ => {}
            }
            match nodes.delete(&name, &DeleteParams::default()).await {
                Err(e) if !gone(&e) => return Err(e.into()),
                _ => {}
            }
        }
        Ok(())
    }
}

impl Cluster for KarpenterCluster {
    fn now(&self) -> Timestamp {
        Timestamp::now()
    }

    fn tick(&self) -> SignedDuration {
        self.tick
    }

    fn wall_clock(&self) -> bool {
        true
    }

    fn price(&self, capacity_type: CapacityType, instance_type: &str, zone: &str) -> Option<f64> {
        self.prices.price(capacity_type, instance_type, zone)
    }

    async fn import(&self, manifest: &str) -> Result<Imported, WorldError> {
        let (docs, skipped) = select(manifest)?;
        let mut applied = Vec::new();
        for doc in docs {
            let doc = translate(doc, self.boot);
            applied.extend(wiring::apply(&self.client, &doc.to_string()).await?);
        }
        Ok(Imported { applied, skipped })
    }

    async fn delete(&self, o: &ObjectRef) -> Result<(), WorldError> {
        let (v, ns) = (o.api_version.as_deref(), o.namespace.as_deref());
        let kind = if o.kind == "EC2NodeClass" {
            KWOK_CLASS
        } else {
            o.kind.as_str()
        };
        let v = if o.kind == "EC2NodeClass" {
            Some("karpenter.kwok.sh/v1alpha1")
        } else {
            v
        };
        wiring::delete(&self.client, v, kind, ns, &o.name).await
    }

    async fn scale(&self, namespace: &str, name: &str, replicas: u32) -> Result<(), WorldError> {
        use k8s_openapi::api::apps::v1::Deployment;
        let api: Api<Deployment> = Api::namespaced(self.client.clone(), namespace);
        let patch = json!({"spec": {"replicas": replicas}});
        api.patch_scale(name, &PatchParams::default(), &Patch::Merge(&patch))
            .await?;
        Ok(())
    }

    async fn step_toward(&mut self, _quiet: bool, end: Timestamp) -> Result<bool, WorldError> {
        let next = (Timestamp::now() + self.tick).min(end);
        if let Ok(d) = std::time::Duration::try_from(next.duration_since(Timestamp::now())) {
            tokio::time::sleep(d).await;
        }
        self.reclaim_due().await?;
        Ok(true)
    }

    async fn snapshot(&self) -> Result<Snapshot, WorldError> {
        let at = Timestamp::now();
        let claims = list_all::<NodeClaim>(&self.client).await?;
        let pods = list_all::<Pod>(&self.client).await?;
        let events = list_all::<Event>(&self.client).await?;
        let nodes: std::collections::BTreeSet<String> = list_all::<Node>(&self.client)
            .await?
            .into_iter()
            .filter_map(|n| n.metadata.name)
            .collect();
        let mut billed = std::collections::BTreeMap::new();
        let mut per_hour = 0.0;
        // An instance is billed from its launch until Karpenter's provider deletes it, after
        // which the NodeClaim goes within moments.
        for c in claims
            .iter()
            .filter(|c| kerf_control::claim::provider_id(c).is_some())
        {
            let label = |k: &str| c.metadata.labels.as_ref().and_then(|l| l.get(k)).cloned();
            let (Some(it), Some(ct), Some(zone)) = (
                label(kerf_labels::INSTANCE_TYPE),
                label(kerf_labels::CAPACITY_TYPE),
                label(kerf_labels::ZONE),
            ) else {
                continue;
            };
            let Some(kind) = CapacityType::parse(&ct) else {
                continue;
            };
            per_hour += self.prices.price(kind, &it, &zone).unwrap_or(0.0);
            *billed.entry(format!("{it}/{ct}")).or_default() += 1;
        }
        Ok(Snapshot {
            at,
            claims: Arc::new(claims),
            stranded: stranded(&pods, |n| !nodes.contains(n)),
            pods: Arc::new(pods),
            events: Arc::new(events),
            billed,
            billed_per_hour: per_hour,
            interruptions: 0,
            reclaims_due: self.reclaims.len(),
        })
    }

    async fn node_pools(&self) -> Result<Vec<NodePool>, WorldError> {
        Ok(list_all::<NodePool>(&self.client).await?)
    }

    async fn change(&mut self, change: CloudChange<'_>) -> Result<Option<String>, WorldError> {
        let file = self.process.types_file();
        let restarted = "applied to Karpenter by restarting it with its instance-types file \
            rewritten (its KWOK provider reads offerings once, at start)";
        Ok(Some(match change {
            CloudChange::Interrupt(picked) => {
                let at = Timestamp::now() + RECLAIM_AFTER;
                for (claim, _) in picked {
                    if let Some(node) = self.node_of(claim).await? {
                        self.reclaims.push((at, node));
                    }
                }
                "no warning reaches Karpenter (its KWOK provider has no interruption queue): \
                    the instances go away in 2 minutes"
                    .to_string()
            }
            CloudChange::Unavailable(sel) => {
                self.no_capacity.push(NoCapacity::of(sel));
                self.retype(&file).await?;
                format!("offerings unavailable {restarted}")
            }
            CloudChange::Available(sel) => {
                let which = NoCapacity::of(sel);
                self.no_capacity.retain(|n| *n != which);
                self.retype(&file).await?;
                format!("offerings available again {restarted}")
            }
            CloudChange::SpotPrice(p) => {
                self.prices
                    .set_spot(&p.instance_type, p.zone.as_deref(), p.price);
                self.retype(&file).await?;
                format!("spot price {restarted}")
            }
            CloudChange::FailNode(_) => {
                "node fault: no equivalent on Karpenter's side (its KWOK nodes stay Ready)".into()
            }
            CloudChange::ReleaseAmi(id) => format!(
                "AMI {id}: no equivalent on Karpenter's side (its KWOK provider reports no drift)"
            ),
            CloudChange::Reserve(r) => format!(
                "capacity reservation {}: no equivalent on Karpenter's side (its KWOK provider \
                    offers no reservations)",
                r.id
            ),
            CloudChange::CancelReservation(id) => format!(
                "cancelling capacity reservation {id}: no equivalent on Karpenter's side (its \
                    KWOK provider offers no reservations)"
            ),
        }))
    }

    async fn audit(&self) -> Result<Vec<String>, WorldError> {
        Ok(Vec::new())
    }

    fn usage(&self) -> Option<Usage> {
        Some(self.process.usage())
    }
}

impl KarpenterCluster {
    /// The Node of a NodeClaim, if it has registered.
    async fn node_of(&self, claim: &str) -> Result<Option<String>, WorldError> {
        let api: Api<NodeClaim> = Api::all(self.client.clone());
        let c = api.get_opt(claim).await?;
        Ok(c.and_then(|c| c.status.and_then(|s| s.node_name)))
    }
}
