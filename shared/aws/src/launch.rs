//! Launching one NodeClaim: re-find an instance a previous attempt already launched, else
//! CreateFleet with a ClientToken; record capacity failures in the unavailable-offerings cache.
//!
//! Idempotency: the ClientToken (derived from the NodeClaim UID) makes AWS return the first
//! fleet's result for a retried call. moto ignores ClientToken, so before creating, the
//! adapter also looks for a live instance tagged with the NodeClaim's name; this covers
//! retries after a completed call (on AWS and moto alike), and the token covers races.

use jiff::Timestamp;
use kerf_catalog::{CapacityType, Catalog};

use crate::error::{AwsError, from_sdk};
use crate::fleet::{self, LaunchOption, LaunchRequest, Launched};
use crate::ice::{self, OfferingCacheStore};
use crate::instances;

/// Launches (or re-finds) the instance of `req.nodeclaim_name`.
pub async fn launch(ec2: &aws_sdk_ec2::Client, req: &LaunchRequest) -> Result<Launched, AwsError> {
    if let Some(i) = instances::find_by_nodeclaim(ec2, &req.cluster, &req.nodeclaim_name).await? {
        return Ok(Launched {
            provider_id: i.provider_id(),
            instance_id: i.id,
            instance_type: i.instance_type,
            zone: i.zone,
            capacity_type: req.capacity_type,
            unavailable: Vec::new(),
            reused: true,
        });
    }
    let Some(call) = fleet::create_fleet(ec2, req) else {
        return Err(AwsError::NoCapacity(Vec::new()));
    };
    let out = call.send().await.map_err(|e| from_sdk("CreateFleet", e))?;
    fleet::interpret(&out, req)
}

/// [`launch`], then writes the offerings that failed for capacity to the cache store.
/// A store failure is logged, not returned: the launch result matters more.
pub async fn launch_recording(
    ec2: &aws_sdk_ec2::Client,
    store: &impl OfferingCacheStore,
    req: &LaunchRequest,
    now: Timestamp,
) -> Result<Launched, AwsError> {
    let result = launch(ec2, req).await;
    let failed = match &result {
        Ok(l) => l.unavailable.clone(),
        Err(AwsError::NoCapacity(keys)) => keys.clone(),
        Err(_) => Vec::new(),
    };
    if !failed.is_empty()
        && let Err(e) = ice::mark_unavailable(store, &failed, now).await
    {
        tracing::warn!(error = %e, "could not record unavailable offerings");
    }
    result
}

/// The available offerings of `capacity_type` for the candidate types (in catalog order),
/// each with the launch template chosen for its type (`None` skips the type).
pub fn options_from_catalog(
    catalog: &Catalog,
    candidates: &[String],
    capacity_type: CapacityType,
    template_for: impl Fn(&str) -> Option<String>,
) -> Vec<LaunchOption> {
    let mut out = Vec::new();
    for it in catalog
        .instance_types
        .iter()
        .filter(|it| candidates.contains(&it.name))
    {
        let Some(lt) = template_for(&it.name) else {
            continue;
        };
        for o in it
            .offerings
            .iter()
            .filter(|o| o.available && o.capacity_type == capacity_type)
        {
            out.push(LaunchOption {
                instance_type: it.name.clone(),
                zone: o.zone.clone(),
                price: o.price,
                launch_template: lt.clone(),
            });
        }
    }
    out
}
