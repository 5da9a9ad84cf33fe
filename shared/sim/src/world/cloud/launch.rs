//! Launches in the simulated EC2: the catalog of a node class (the bundled one, with spot
//! price overrides and the reservations its terms select), CreateFleet in EC2's order with
//! ClientToken idempotency and capacity failures, and stray instances for tests.

use kerf_catalog::reservation;

use super::*;

impl SimCloud {
    /// Starts an instance outside any NodeClaim (an orphan, for tests).
    pub fn start_stray(
        &self,
        instance_type: &str,
        zone: &str,
        tags: BTreeMap<String, String>,
    ) -> String {
        let now = self.clock.now();
        let mut s = self.lock();
        let id = next_id(&mut s);
        let info = Instance {
            id: id.clone(),
            provider_id: provider_id(zone, &id),
            instance_type: instance_type.into(),
            zone: zone.into(),
            state: "pending".into(),
            capacity_type: CapacityType::OnDemand,
            launch_time: Some(now),
            image_id: Some("ami-sim".into()),
            private_dns_name: Some(dns_name(&id, zone)),
            partition: None,
            tags,
            capacity_reservation: None,
            subnet_id: Some(port::subnet_id(zone)),
            security_group_ids: vec![port::SECURITY_GROUP_ID.into()],
        };
        s.instances.insert(
            id.clone(),
            SimInstance {
                info,
                running_at: now + self.boot_delay,
                reclaim_at: None,
                block_ends_at: None,
                labels: BTreeMap::new(),
                taints: Vec::new(),
                node_class: String::new(),
                type_labels: BTreeMap::new(),
                capacity: BTreeMap::new(),
                allocatable: BTreeMap::new(),
                fault: None,
            },
        );
        id
    }

    /// The catalog for a node class: the bundled one for its settings (cached), with the
    /// reservations its terms select now as `reserved` offerings.
    pub fn catalog_for(&self, class: &EC2NodeClass) -> Result<Arc<Catalog>, CloudError> {
        let base = self.base_catalog(class)?;
        let now = self.clock.now();
        let found = self.selected(class, now);
        if found.is_empty() {
            return Ok(base);
        }
        Ok(Arc::new(reservation::offer((*base).clone(), &found, now)))
    }

    /// The bundled catalog for the class's settings with the spot price overrides (cached per
    /// settings).
    fn base_catalog(&self, class: &EC2NodeClass) -> Result<Arc<Catalog>, CloudError> {
        let settings = kerf_convert::cluster::settings(class)
            .map_err(|e| CloudError::NodeClassNotReady(e.to_string()))?;
        let key = format!("{settings:?}");
        let mut cache = self.catalogs.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(c) = cache.get(&key) {
            return Ok(c.clone());
        }
        let mut c = kerf_catalog::bundled(&self.region, &settings)
            .map_err(|e| CloudError::InvalidRequest(e.to_string()))?;
        self.prices.apply(&mut c);
        let c = Arc::new(c);
        cache.insert(key, c.clone());
        Ok(c)
    }

    pub(super) fn launch_now(&self, req: &LaunchRequest) -> Result<Launched, CloudError> {
        let now = self.clock.now();
        let catalog = self.catalog_for(&req.node_class)?;
        let mut s = self.lock();
        s.fleet_calls.push(FleetCall {
            at: Instant::now(),
            node_claim: req.node_claim.clone(),
            options: req.options.len(),
        });
        if let Some(id) = s.tokens.get(&req.node_claim_uid).cloned()
            && let Some(i) = s.instances.get(&id)
        {
            return Ok(launched(i, Vec::new()));
        }
        let mut unavailable = Vec::new();
        for o in fleet_order(req, &catalog) {
            let reserved = o
                .reservation
                .as_ref()
                .filter(|_| req.capacity_type == CapacityType::Reserved);
            let key = OfferingKey::new(req.capacity_type, &o.instance_type, &o.zone)
                .in_reservation(reserved.map(|r| r.id.as_str()));
            let full = reserved.is_some_and(|r| !reservations::has_room(&s, &r.id, now));
            if full || s.no_capacity.iter().any(|n| n.matches(&key)) {
                unavailable.push(key);
                continue;
            }
            let id = next_id(&mut s);
            let mut tags = req.node_class.spec.tags.clone();
            tags.insert(kerf_labels::NODEPOOL.into(), req.node_pool.clone());
            tags.insert(
                kerf_labels::aws::NODECLAIM_TAG.into(),
                req.node_claim.clone(),
            );
            tags.insert(
                kerf_labels::aws::NODECLASS.into(),
                req.node_class.metadata.name.clone().unwrap_or_default(),
            );
            let it = catalog
                .instance_types
                .iter()
                .find(|t| t.name == o.instance_type);
            let arch = it
                .and_then(|t| t.labels.get(kerf_labels::ARCH))
                .map(String::as_str)
                .unwrap_or("amd64");
            let class = req.node_class.metadata.name.as_deref().unwrap_or_default();
            s.templates
                .insert(template_name(class, &self.ami(arch)), now);
            let info = Instance {
                id: id.clone(),
                provider_id: provider_id(&o.zone, &id),
                instance_type: o.instance_type.clone(),
                zone: o.zone.clone(),
                state: "pending".into(),
                capacity_type: req.capacity_type,
                launch_time: Some(now),
                image_id: Some(self.ami(arch)),
                private_dns_name: Some(dns_name(&id, &o.zone)),
                partition: None,
                tags,
                capacity_reservation: reserved.map(|r| r.id.clone()),
                subnet_id: Some(port::subnet_id(&o.zone)),
                security_group_ids: vec![port::SECURITY_GROUP_ID.into()],
            };
            let inst = SimInstance {
                info,
                running_at: now + self.boot_delay,
                reclaim_at: None,
                block_ends_at: reserved.and_then(|r| reservations::block_end(&s, &r.id)),
                labels: req.labels.clone(),
                taints: req.taints.clone(),
                node_class: req.node_class.metadata.name.clone().unwrap_or_default(),
                type_labels: it.map(|t| t.labels.clone()).unwrap_or_default(),
                capacity: it.map(|t| t.capacity.to_strings()).unwrap_or_default(),
                allocatable: it.map(|t| t.allocatable.to_strings()).unwrap_or_default(),
                fault: None,
            };
            let out = Launched {
                reservation: reserved.cloned(),
                ..launched(&inst, unavailable)
            };
            s.tokens.insert(req.node_claim_uid.clone(), id.clone());
            s.instances.insert(id, inst);
            return Ok(out);
        }
        Err(CloudError::NoCapacity(unavailable))
    }
}

/// The simulated launch template of a class's launches with `ami`.
fn template_name(class: &str, ami: &str) -> String {
    format!("kerf.k8s.aws/{class}/{ami}")
}

fn next_id(s: &mut State) -> String {
    s.next += 1;
    format!("i-{:017x}", 0x0a5e_0000_0000 + s.next)
}

/// The order the simulated fleet tries the options in: by their priority (the request's
/// price) when the request is prioritized, else by EC2's own price list (`lowest-price`,
/// whatever prices the request believed); ties keep the request's order.
fn fleet_order<'a>(req: &'a LaunchRequest, catalog: &Catalog) -> Vec<&'a LaunchOption> {
    let listed = |o: &LaunchOption| {
        catalog
            .instance_types
            .iter()
            .find(|t| t.name == o.instance_type)
            .and_then(|t| {
                t.offerings
                    .iter()
                    .find(|f| f.zone == o.zone && f.capacity_type == req.capacity_type)
            })
            .map_or(o.price, |f| f.price)
    };
    let mut v: Vec<(f64, &LaunchOption)> = req
        .options
        .iter()
        .map(|o| (if req.prioritized { o.price } else { listed(o) }, o))
        .collect();
    v.sort_by(|a, b| a.0.total_cmp(&b.0));
    v.into_iter().map(|(_, o)| o).collect()
}

fn launched(i: &SimInstance, unavailable: Vec<OfferingKey>) -> Launched {
    Launched {
        instance_id: i.info.id.clone(),
        provider_id: i.info.provider_id.clone(),
        instance_type: i.info.instance_type.clone(),
        zone: i.info.zone.clone(),
        capacity_type: i.info.capacity_type,
        image_id: i.info.image_id.clone(),
        unavailable,
        reservation: None,
    }
}
