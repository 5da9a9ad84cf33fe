//! The control layer's Cloud port on EC2 ([`Ec2Cloud`]): catalogs from instance-type
//! discovery and live prices, zones limited to the class's subnets, types and offerings
//! shaped by its placement group, and its capacity reservations offered (the
//! `ReservedCapacity` gate); launches through launch templates grouped by (AMI, max pods,
//! placement, reservation) and one CreateFleet per NodeClaim with the
//! NodeClaim UID as ClientToken; instances described, listed by cluster tag and terminated.
//! Node classes are resolved once a minute per class version; the cluster's endpoint, CA
//! and version are read once per container.

mod placement;
mod reservations;
mod status;
mod templates;

pub use reservations::{CAPACITY_RESERVATIONS_READY, entries, reservations_condition};
pub use status::{PLACEMENT_GROUP_READY, placement_condition};

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use jiff::{SignedDuration, Timestamp};
use kerf_api::v1::EC2NodeClass;
use kerf_catalog::Catalog;
use kerf_control::ports::{self, Cloud, CloudError, LaunchRequest};
use tokio::sync::OnceCell;

use crate::capacity_reservation::CapacityReservations;
use crate::cluster::{self, Cluster};
use crate::config::Clients;
use crate::discovery::Discovery;
use crate::error::AwsError;
use crate::fleet;
use crate::instances;
use crate::launch;
use crate::launch_template;
use crate::nodeclass::{self, Resolved};
use crate::placement_group::{PlacementGroups, Resolution};
use crate::price_book::PriceBook;

/// How long a resolved node class is reused (Karpenter's subnet/SG/AMI caches: 1–5 min).
pub const CLASS_TTL: SignedDuration = SignedDuration::from_mins(1);

/// What the adapter needs to know beyond the clients.
#[derive(Clone, Debug)]
pub struct CloudSettings {
    pub cluster: String,
    pub region: String,
    /// SSM root of the EKS AMI parameters.
    pub ssm_root: String,
    /// The cluster's join facts; read with DescribeCluster when `None`.
    pub cluster_info: Option<Cluster>,
    /// Restrict discovery to these instance types (tests; empty = all).
    pub instance_types: Vec<String>,
    /// Karpenter's `ReservedCapacity` feature gate (on by default): node classes' capacity
    /// reservations are discovered, offered and launched into.
    pub reserved_capacity: bool,
}

impl CloudSettings {
    pub fn new(cluster: &str, region: &str) -> Self {
        CloudSettings {
            cluster: cluster.into(),
            region: region.into(),
            ssm_root: crate::ami::DEFAULT_SSM_ROOT.into(),
            cluster_info: None,
            instance_types: Vec::new(),
            reserved_capacity: true,
        }
    }
}

type ClassKey = (String, String);

/// The Cloud port on EC2.
pub struct Ec2Cloud {
    clients: Clients,
    settings: CloudSettings,
    discovery: Arc<Discovery>,
    prices: Arc<PriceBook>,
    refreshing: Arc<AtomicBool>,
    cluster: OnceCell<Cluster>,
    classes: Mutex<BTreeMap<ClassKey, (Timestamp, Arc<Resolved>)>>,
    placement_groups: PlacementGroups,
    reservations: CapacityReservations,
}

impl std::fmt::Debug for Ec2Cloud {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Ec2Cloud")
            .field("cluster", &self.settings.cluster)
            .finish_non_exhaustive()
    }
}

impl From<AwsError> for CloudError {
    fn from(e: AwsError) -> Self {
        match e {
            AwsError::NoCapacity(keys) => CloudError::NoCapacity(keys),
            AwsError::NotFound(i) => CloudError::NotFound(i.to_string()),
            AwsError::Throttled(i) => CloudError::Throttled(i.to_string()),
            AwsError::Unauthorized(i) => CloudError::Unauthorized(i.to_string()),
            AwsError::InvalidRequest(i) => CloudError::InvalidRequest(i.to_string()),
            AwsError::Transient(i) => CloudError::Transient(i.to_string()),
        }
    }
}

fn arch_of(label: &str) -> &str {
    match label {
        "amd64" => "x86_64",
        other => other,
    }
}

impl Ec2Cloud {
    pub fn new(clients: Clients, settings: CloudSettings) -> Self {
        Ec2Cloud {
            discovery: Arc::new(Discovery::new(
                &settings.region,
                settings.instance_types.clone(),
            )),
            prices: Arc::new(PriceBook::new(
                &settings.region,
                settings.instance_types.clone(),
            )),
            refreshing: Arc::new(AtomicBool::new(false)),
            cluster: OnceCell::new(),
            classes: Mutex::new(BTreeMap::new()),
            placement_groups: PlacementGroups::new(),
            reservations: CapacityReservations::new(),
            clients,
            settings,
        }
    }

    async fn cluster(&self) -> Result<&Cluster, AwsError> {
        self.cluster
            .get_or_try_init(|| async {
                match &self.settings.cluster_info {
                    Some(c) => Ok(c.clone()),
                    None => cluster::describe(&self.clients.eks, &self.settings.cluster).await,
                }
            })
            .await
    }

    /// The class resolved (cached for [`CLASS_TTL`] per name and resourceVersion).
    pub async fn resolved(&self, c: &EC2NodeClass) -> Result<Arc<Resolved>, AwsError> {
        let key = (
            c.metadata.name.clone().unwrap_or_default(),
            c.metadata.resource_version.clone().unwrap_or_default(),
        );
        let now = Timestamp::now();
        if let Some((at, r)) = self
            .classes
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&key)
            && now < *at + CLASS_TTL
        {
            return Ok(r.clone());
        }
        let version = self.cluster().await?.version.clone();
        let r = Arc::new(
            nodeclass::resolve(
                &self.clients.ec2,
                &self.clients.ssm,
                c,
                &version,
                &self.settings.ssm_root,
            )
            .await?,
        );
        self.classes
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(key, (now, r.clone()));
        Ok(r)
    }

    /// The class's placement group, resolved (cached; see [`crate::placement_group`]).
    pub async fn placement(&self, c: &EC2NodeClass) -> Resolution {
        let selector = c.spec.placement_group_selector.as_ref();
        self.placement_groups
            .resolve(&self.clients.ec2, selector, Timestamp::now())
            .await
    }

    /// The class's catalog in its placement group, with its reservations offered.
    async fn class_catalog(&self, c: &EC2NodeClass) -> Result<Catalog, CloudError> {
        let catalog = self.zonal_catalog(c).await?;
        let now = Timestamp::now();
        let specs = self
            .discovery
            .cached(now)
            .map(|inv| inv.specs)
            .unwrap_or_default();
        let placed = placement::placed(catalog, &self.placement(c).await, &specs)?;
        let found = self.reservations(c, now).await;
        Ok(reservations::offered(placed, found.as_ref(), now))
    }

    /// The class's catalog in the zones of its subnets.
    async fn zonal_catalog(&self, c: &EC2NodeClass) -> Result<Catalog, CloudError> {
        let resolved = self.resolved(c).await?;
        let settings = kerf_convert::cluster::settings(c)
            .map_err(|e| CloudError::NodeClassNotReady(e.to_string()))?;
        let zones: BTreeSet<String> = resolved.subnets.keys().cloned().collect();
        let now = Timestamp::now();
        if self.discovery.cached(now).is_none()
            && let Some(c) = self.bundled(&settings, &zones)
        {
            // A cold container plans with the bundled catalog while the live one is
            // fetched in the background (Karpenter likewise starts on its static prices).
            self.refresh_in_background();
            return Ok(c);
        }
        let prices = self
            .prices
            .prices(&self.clients.pricing, &self.clients.ec2, now)
            .await;
        let (catalog, _) = self
            .discovery
            .catalog(&self.clients.ec2, now, Some(&zones), &prices, &settings)
            .await
            .map_err(|e| CloudError::Transient(e.to_string()))?;
        Ok(catalog)
    }

    /// The bundled catalog of the region in `zones` (`None` for a region Kerf bundles no
    /// data for).
    fn bundled(
        &self,
        settings: &kerf_catalog::NodeClassSettings,
        zones: &BTreeSet<String>,
    ) -> Option<Catalog> {
        let mut c = kerf_catalog::bundled(&self.settings.region, settings).ok()?;
        if !self.settings.instance_types.is_empty() {
            c.instance_types
                .retain(|it| self.settings.instance_types.contains(&it.name));
        }
        for it in &mut c.instance_types {
            it.offerings.retain(|o| zones.contains(&o.zone));
        }
        c.instance_types.retain(|it| !it.offerings.is_empty());
        Some(c)
    }

    /// Starts one refresh of instance types and prices that outlives the invocation.
    fn refresh_in_background(&self) {
        if self.refreshing.swap(true, Ordering::SeqCst) {
            return;
        }
        let (discovery, prices) = (self.discovery.clone(), self.prices.clone());
        let (ec2, pricing) = (self.clients.ec2.clone(), self.clients.pricing.clone());
        let flag = self.refreshing.clone();
        tokio::spawn(async move {
            let now = Timestamp::now();
            prices.prices(&pricing, &ec2, now).await;
            if let Err(e) = discovery.inventory(&ec2, now).await {
                tracing::warn!(error = %e, "instance-type discovery failed; retrying on a later invocation");
            }
            flag.store(false, Ordering::SeqCst);
        });
    }
}

impl Cloud for Ec2Cloud {
    async fn node_class_status(
        &self,
        class: &EC2NodeClass,
    ) -> Result<kerf_api::v1::EC2NodeClassStatus, CloudError> {
        let resolved = self.resolved(class).await?;
        let mut s = status::status(&resolved, &self.placement(class).await);
        let now = Timestamp::now();
        if let Some(found) = self.reservations(class, now).await {
            s.capacity_reservations = reservations::shown(&found, class.status.as_ref(), now);
            s.conditions.push(reservations_condition(&found));
        }
        Ok(s)
    }

    async fn catalog(&self, class: &EC2NodeClass) -> Result<Arc<Catalog>, CloudError> {
        self.class_catalog(class).await.map(Arc::new)
    }

    async fn launch(&self, req: &LaunchRequest) -> Result<ports::Launched, CloudError> {
        let req = &*reservations::launchable(req)?;
        let cluster = self.cluster().await?.clone();
        let resolved = self.resolved(&req.node_class).await?;
        let catalog = self.class_catalog(&req.node_class).await?;
        let group = self.placement(&req.node_class).await.group().cloned();
        let (options, specs) = templates::templates(
            &self.settings.cluster,
            &cluster,
            req,
            &resolved,
            &catalog,
            group.as_ref(),
            self.settings.reserved_capacity,
        )?;
        let now = Timestamp::now();
        for s in &specs {
            launch_template::ensure(&self.clients.ec2, s, now).await?;
        }
        let fleet_req = fleet::LaunchRequest {
            cluster: self.settings.cluster.clone(),
            nodeclaim_name: req.node_claim.clone(),
            nodeclaim_uid: req.node_claim_uid.clone(),
            nodepool: req.node_pool.clone(),
            nodeclass: req.node_class.metadata.name.clone().unwrap_or_default(),
            capacity_type: req.capacity_type,
            options,
            subnets: resolved.subnets.clone(),
            tags: req.node_class.spec.tags.clone(),
            prioritized: req.prioritized,
            placement_group: group.map(|g| g.id),
        };
        let l = launch::launch_ensuring(&self.clients.ec2, &fleet_req, &specs, now).await?;
        let image_id = catalog
            .instance_types
            .iter()
            .find(|t| t.name == l.instance_type)
            .and_then(|it| {
                let arch = arch_of(
                    it.labels
                        .get(kerf_labels::ARCH)
                        .map(String::as_str)
                        .unwrap_or("amd64"),
                );
                resolved
                    .amis
                    .iter()
                    .find(|a| a.arch == arch)
                    .map(|a| a.id.clone())
            });
        Ok(ports::Launched {
            instance_id: l.instance_id,
            provider_id: l.provider_id,
            instance_type: l.instance_type,
            zone: l.zone,
            capacity_type: l.capacity_type,
            image_id,
            unavailable: l.unavailable,
            reservation: l.reservation,
        })
    }

    async fn describe(&self, ids: &[String]) -> Result<Vec<ports::Instance>, CloudError> {
        Ok(instances::describe(&self.clients.ec2, ids).await?)
    }

    async fn list(&self) -> Result<Vec<ports::Instance>, CloudError> {
        Ok(instances::list_cluster(&self.clients.ec2, &self.settings.cluster).await?)
    }

    async fn terminate(&self, ids: &[String]) -> Result<(), CloudError> {
        Ok(instances::terminate(&self.clients.ec2, ids).await?)
    }

    async fn unhealthy(&self) -> Result<Vec<ports::Unhealthy>, CloudError> {
        Ok(crate::health::unhealthy(&self.clients.ec2).await?)
    }

    async fn delete_unused_templates(&self, now: Timestamp) -> Result<Vec<String>, CloudError> {
        let (cluster, since) = (&self.settings.cluster, now - ports::TEMPLATE_UNUSED_FOR);
        Ok(launch_template::delete_unused(&self.clients.ec2, cluster, since).await?)
    }
}
