//! Launching one NodeClaim: re-find an instance a previous attempt already launched, else
//! CreateFleet with a ClientToken; record capacity failures in the unavailable-offerings cache.
//!
//! A launch template that vanished between ensure and CreateFleet is re-ensured and the
//! launch retried once ([`launch_ensuring`]).
//!
//! Idempotency: the ClientToken (derived from the NodeClaim UID) makes AWS return the first
//! fleet's result for a retried call. moto ignores ClientToken, so before creating, the
//! adapter also looks for a live instance tagged with the NodeClaim's name; this covers
//! retries after a completed call (on AWS and moto alike), and the token covers races.

use jiff::Timestamp;
use kerf_catalog::unavailable::{UnavailableOfferings, UnavailableOfferingsStore};
use kerf_catalog::{CapacityType, Catalog};

use crate::error::{AwsError, from_sdk};
use crate::fleet::{self, LaunchOption, LaunchRequest, Launched};
use crate::instances;
use crate::launch_template::{self, LaunchTemplateSpec};

/// One launch attempt: the result, and the subnets it found out of free addresses.
struct Attempt {
    result: Result<Launched, AwsError>,
    full_subnets: Vec<String>,
}

impl Attempt {
    fn failed(e: AwsError) -> Self {
        Attempt {
            result: Err(e),
            full_subnets: Vec::new(),
        }
    }
}

/// Launches (or re-finds) the instance of `req.nodeclaim_name`.
pub async fn launch(ec2: &aws_sdk_ec2::Client, req: &LaunchRequest) -> Result<Launched, AwsError> {
    // No template to re-ensure, so no use to record: the time is never read.
    attempt(ec2, req, &[], Timestamp::UNIX_EPOCH).await.result
}

/// [`launch`]; if CreateFleet says a launch template does not exist (deleted by cleanup or
/// by hand since it was ensured), re-ensures `templates` (their use recorded at `now`) and
/// tries once more, as Karpenter does.
pub async fn launch_ensuring(
    ec2: &aws_sdk_ec2::Client,
    req: &LaunchRequest,
    templates: &[LaunchTemplateSpec],
    now: Timestamp,
) -> Result<Launched, AwsError> {
    attempt(ec2, req, templates, now).await.result
}

/// [`launch`], then writes the offerings that failed for capacity (and the subnets out of
/// addresses) to the cache store. A store failure is logged, not returned: the launch result
/// matters more.
pub async fn launch_recording<S: UnavailableOfferingsStore>(
    ec2: &aws_sdk_ec2::Client,
    store: &S,
    req: &LaunchRequest,
    now: Timestamp,
) -> Result<Launched, AwsError> {
    launch_recording_ensuring(ec2, store, req, &[], now).await
}

/// [`launch_ensuring`] and [`launch_recording`] together: the provisioner's launch.
pub async fn launch_recording_ensuring<S: UnavailableOfferingsStore>(
    ec2: &aws_sdk_ec2::Client,
    store: &S,
    req: &LaunchRequest,
    templates: &[LaunchTemplateSpec],
    now: Timestamp,
) -> Result<Launched, AwsError> {
    let a = attempt(ec2, req, templates, now).await;
    let marks = marks_of(&a, now);
    if !marks.is_empty()
        && let Err(e) = store.record(&marks, now).await
    {
        tracing::warn!(error = %e, "could not record unavailable offerings");
    }
    a.result
}

/// The cache marks an attempt calls for.
fn marks_of(a: &Attempt, now: Timestamp) -> UnavailableOfferings {
    let keys = match &a.result {
        Ok(l) => l.unavailable.as_slice(),
        Err(AwsError::NoCapacity(keys)) => keys.as_slice(),
        Err(_) => &[],
    };
    let mut marks = kerf_catalog::unavailable::marks(keys, now);
    for id in &a.full_subnets {
        marks.mark_subnet(id, now);
    }
    marks
}

async fn attempt(
    ec2: &aws_sdk_ec2::Client,
    req: &LaunchRequest,
    templates: &[LaunchTemplateSpec],
    now: Timestamp,
) -> Attempt {
    match instances::find_by_nodeclaim(ec2, &req.cluster, &req.nodeclaim_name).await {
        Ok(Some(i)) => {
            let reservation = reused_reservation(req, &i);
            return Attempt {
                result: Ok(Launched {
                    provider_id: i.provider_id.clone(),
                    instance_id: i.id,
                    instance_type: i.instance_type,
                    zone: i.zone,
                    capacity_type: req.capacity_type,
                    unavailable: Vec::new(),
                    reused: true,
                    reservation,
                }),
                full_subnets: Vec::new(),
            };
        }
        Ok(None) => {}
        Err(e) => return Attempt::failed(e),
    }
    let first = create(ec2, req).await;
    if templates.is_empty() || !is_template_not_found(&first.result) {
        return first;
    }
    tracing::info!(nodeclaim = %req.nodeclaim_name, "launch template missing; re-creating it");
    for spec in templates {
        if let Err(e) = launch_template::ensure(ec2, spec, now).await {
            return Attempt::failed(e);
        }
    }
    create(ec2, req).await
}

/// The reservation of an instance a previous attempt launched: the option's whose
/// reservation it runs in, else the option's of its type and zone.
fn reused_reservation(
    req: &LaunchRequest,
    i: &kerf_control::ports::Instance,
) -> Option<kerf_catalog::reservation::ReservedOffering> {
    let by_id = i.capacity_reservation.as_deref().and_then(|id| {
        req.options
            .iter()
            .filter_map(|o| o.reservation.as_ref())
            .find(|r| r.id == id)
    });
    by_id
        .or_else(|| fleet::reservation_of(req, &i.instance_type, &i.zone))
        .cloned()
}

/// One CreateFleet call and the reading of its answer.
async fn create(ec2: &aws_sdk_ec2::Client, req: &LaunchRequest) -> Attempt {
    let Some(call) = fleet::create_fleet(ec2, req) else {
        return Attempt::failed(AwsError::NoCapacity(Vec::new()));
    };
    match call.send().await {
        Ok(out) => Attempt {
            result: fleet::interpret(&out, req),
            full_subnets: fleet::full_subnets(&out, req),
        },
        Err(e) => Attempt::failed(from_sdk("CreateFleet", e)),
    }
}

/// `InvalidLaunchTemplateName.NotFoundException` / `InvalidLaunchTemplateId.NotFound`, as
/// the call's error or as the fleet's only error.
fn is_template_not_found(result: &Result<Launched, AwsError>) -> bool {
    matches!(result, Err(AwsError::NotFound(i)) if i.code.starts_with("InvalidLaunchTemplate"))
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
                reservation: o.reservation.clone(),
            });
        }
    }
    out
}
