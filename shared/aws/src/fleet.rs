//! The CreateFleet request (instant, one instance, cheapest overrides first; a reserved
//! launch's shaped by its reservation market, see [`reserved`]) and the reading of its answer:
//! the launched instance, or the capacity errors that feed the ICE cache.

mod capacity;
pub mod reserved;

pub use capacity::{SPREAD_LIMIT, is_spread_limit};
pub use reserved::{Market, reservation_of};

use std::collections::BTreeMap;

use aws_sdk_ec2::operation::create_fleet::CreateFleetOutput;
use aws_sdk_ec2::types::{
    DefaultTargetCapacityType, FleetLaunchTemplateConfigRequest,
    FleetLaunchTemplateOverridesRequest, FleetLaunchTemplateSpecificationRequest,
    FleetOnDemandAllocationStrategy, FleetType, OnDemandOptionsRequest, ResourceType,
    SpotAllocationStrategy, SpotOptionsRequest, Tag, TagSpecification,
    TargetCapacitySpecificationRequest,
};
use kerf_catalog::CapacityType;
use kerf_catalog::reservation::ReservedOffering;

use crate::error::{AwsError, classify_code};
use crate::network::Subnet;
use kerf_catalog::unavailable::OfferingKey;

/// CreateFleet per-override error codes that mean "no capacity here right now".
pub const CAPACITY_CODES: &[&str] = &[
    "InsufficientInstanceCapacity",
    "MaxSpotInstanceCountExceeded",
    "VcpuLimitExceeded",
    "UnfulfillableCapacity",
    "Unsupported",
    "InsufficientFreeAddressesInSubnet",
    "MaxFleetCountExceeded",
    "ReservationCapacityExceeded",
];

pub use kerf_labels::MAX_INSTANCE_TYPES;

pub fn is_capacity_code(code: &str) -> bool {
    CAPACITY_CODES.contains(&code)
}

/// One candidate offering for a launch.
#[derive(Clone, Debug, PartialEq)]
pub struct LaunchOption {
    pub instance_type: String,
    pub zone: String,
    pub price: f64,
    /// Name of the launch template (see `launch_template::ensure`) for this type.
    pub launch_template: String,
    /// The capacity reservation a reserved launch takes this option from.
    pub reservation: Option<ReservedOffering>,
}

/// Everything CreateFleet needs for one NodeClaim.
#[derive(Clone, Debug, PartialEq)]
pub struct LaunchRequest {
    pub cluster: String,
    pub nodeclaim_name: String,
    pub nodeclaim_uid: String,
    pub nodepool: String,
    pub nodeclass: String,
    pub capacity_type: CapacityType,
    /// Candidate offerings of `capacity_type`, in any order (sorted cheapest first here).
    pub options: Vec<LaunchOption>,
    /// The launch subnet of each zone (`network::zonal_subnets`).
    pub subnets: BTreeMap<String, Subnet>,
    /// EC2NodeClass `spec.tags`.
    pub tags: BTreeMap<String, String>,
    /// A NodeOverlay set some options' prices: each override carries its (overlaid) price as
    /// its `Priority`, and the fleet follows them (`prioritized` on-demand,
    /// `capacity-optimized-prioritized` spot), as Karpenter's provider does.
    pub prioritized: bool,
    /// The node class's placement group (`pg-...`): capacity errors are scoped by it.
    pub placement_group: Option<String>,
}

/// A launched (or, on retry, re-found) instance.
#[derive(Clone, Debug, PartialEq)]
pub struct Launched {
    pub instance_id: String,
    pub instance_type: String,
    pub zone: String,
    pub capacity_type: CapacityType,
    /// `aws:///<zone>/<instance id>`.
    pub provider_id: String,
    /// Offerings that failed for capacity on the way (feed them to the ICE cache).
    pub unavailable: Vec<OfferingKey>,
    /// True when the instance already existed (an idempotent retry).
    pub reused: bool,
    /// The reservation of the option launched (reserved launches).
    pub reservation: Option<ReservedOffering>,
}

pub fn provider_id(zone: &str, instance_id: &str) -> String {
    format!("aws:///{zone}/{instance_id}")
}

/// The CreateFleet ClientToken: stable per NodeClaim, so a retried launch is idempotent.
pub fn client_token(nodeclaim_uid: &str) -> String {
    let mut t = format!("kerf-{nodeclaim_uid}");
    t.truncate(64);
    t
}

/// EC2NodeClass tags, overridden by the tags Kerf owns.
pub fn launch_tags(req: &LaunchRequest) -> BTreeMap<String, String> {
    let mut tags = req.tags.clone();
    tags.insert(kerf_labels::aws::cluster_tag(&req.cluster), "owned".into());
    tags.insert("eks:eks-cluster-name".into(), req.cluster.clone());
    tags.insert(kerf_labels::NODEPOOL.into(), req.nodepool.clone());
    tags.insert(
        kerf_labels::aws::NODECLAIM_TAG.into(),
        req.nodeclaim_name.clone(),
    );
    tags.insert(kerf_labels::aws::NODECLASS.into(), req.nodeclass.clone());
    tags
}

/// The options actually sent: cheapest first, the first 60 distinct types, zones with a subnet.
pub fn ordered_options(req: &LaunchRequest) -> Vec<LaunchOption> {
    let mut opts: Vec<LaunchOption> = req
        .options
        .iter()
        .filter(|o| req.subnets.contains_key(&o.zone))
        .cloned()
        .collect();
    opts.sort_by(|a, b| {
        a.price
            .total_cmp(&b.price)
            .then_with(|| a.instance_type.cmp(&b.instance_type))
    });
    let mut types: Vec<&str> = Vec::new();
    let mut kept = Vec::new();
    for o in &opts {
        if !types.contains(&o.instance_type.as_str()) {
            if types.len() == MAX_INSTANCE_TYPES {
                continue;
            }
            types.push(&o.instance_type);
        }
        kept.push(o.clone());
    }
    kept
}

fn tag_spec(rt: ResourceType, tags: &BTreeMap<String, String>) -> TagSpecification {
    let tags = tags
        .iter()
        .map(|(k, v)| Tag::builder().key(k).value(v).build());
    TagSpecification::builder()
        .resource_type(rt)
        .set_tags(Some(tags.collect()))
        .build()
}

/// Launch template configs, one per template, overrides in option order.
fn template_configs(
    req: &LaunchRequest,
    opts: &[LaunchOption],
) -> Vec<FleetLaunchTemplateConfigRequest> {
    let mut order: Vec<&str> = Vec::new();
    let mut by_lt: BTreeMap<&str, Vec<FleetLaunchTemplateOverridesRequest>> = BTreeMap::new();
    for o in opts {
        let Some(subnet) = req.subnets.get(&o.zone) else {
            continue;
        };
        if !order.contains(&o.launch_template.as_str()) {
            order.push(&o.launch_template);
        }
        let ov = FleetLaunchTemplateOverridesRequest::builder()
            .instance_type(o.instance_type.as_str().into())
            .subnet_id(&subnet.id)
            .availability_zone(&o.zone)
            .set_priority(req.prioritized.then_some(o.price))
            .build();
        by_lt.entry(&o.launch_template).or_default().push(ov);
    }
    order
        .into_iter()
        .map(|lt| {
            let spec = FleetLaunchTemplateSpecificationRequest::builder()
                .launch_template_name(lt)
                .version("$Latest")
                .build();
            FleetLaunchTemplateConfigRequest::builder()
                .launch_template_specification(spec)
                .set_overrides(by_lt.remove(lt))
                .build()
        })
        .collect()
}

/// Builds the CreateFleet call; `None` when no option has a subnet.
pub fn create_fleet(
    ec2: &aws_sdk_ec2::Client,
    req: &LaunchRequest,
) -> Option<aws_sdk_ec2::operation::create_fleet::builders::CreateFleetFluentBuilder> {
    let opts = ordered_options(req);
    if opts.is_empty() {
        return None;
    }
    let tags = launch_tags(req);
    let spot = req.capacity_type == CapacityType::Spot;
    let market = reserved::market(req, &opts);
    let target = TargetCapacitySpecificationRequest::builder()
        .total_target_capacity(1)
        .default_target_capacity_type(match (spot, market) {
            (true, _) => DefaultTargetCapacityType::Spot,
            (false, Some(m)) => m.target(),
            (false, None) => DefaultTargetCapacityType::OnDemand,
        })
        .build();
    let mut call = ec2
        .create_fleet()
        .r#type(FleetType::Instant)
        .client_token(client_token(&req.nodeclaim_uid))
        .target_capacity_specification(target)
        .set_launch_template_configs(Some(template_configs(req, &opts)))
        .tag_specifications(tag_spec(ResourceType::Instance, &tags))
        .tag_specifications(tag_spec(ResourceType::Volume, &tags))
        .tag_specifications(tag_spec(ResourceType::Fleet, &tags));
    call = match (spot, req.prioritized) {
        (true, prioritized) => call.spot_options(
            SpotOptionsRequest::builder()
                .allocation_strategy(if prioritized {
                    SpotAllocationStrategy::CapacityOptimizedPrioritized
                } else {
                    SpotAllocationStrategy::PriceCapacityOptimized
                })
                .build(),
        ),
        (false, _) if market.is_some_and(|m| !m.on_demand_options()) => {
            call.set_reserved_capacity_options(market.and_then(Market::reserved_options))
        }
        (false, prioritized) => call.on_demand_options(
            OnDemandOptionsRequest::builder()
                .allocation_strategy(if prioritized {
                    FleetOnDemandAllocationStrategy::Prioritized
                } else {
                    FleetOnDemandAllocationStrategy::LowestPrice
                })
                .build(),
        ),
    };
    Some(call)
}

/// The zone of an override: its AvailabilityZone, else its subnet's zone.
fn override_zone(
    req: &LaunchRequest,
    ov: Option<&aws_sdk_ec2::types::FleetLaunchTemplateOverrides>,
) -> Option<String> {
    let ov = ov?;
    if let Some(z) = ov.availability_zone() {
        return Some(z.to_string());
    }
    let sid = ov.subnet_id()?;
    req.subnets
        .values()
        .find(|s| s.id == sid)
        .map(|s| s.zone.clone())
}

/// Reads a CreateFleet answer: the instance, or the typed error when none launched.
pub fn interpret(out: &CreateFleetOutput, req: &LaunchRequest) -> Result<Launched, AwsError> {
    let (unavailable, other) = capacity::read_errors(out, req);
    for inst in out.instances() {
        let Some(id) = inst.instance_ids().first() else {
            continue;
        };
        let ov = inst
            .launch_template_and_overrides()
            .and_then(|l| l.overrides());
        let zone = override_zone(req, ov).unwrap_or_default();
        let instance_type = inst
            .instance_type()
            .map(|t| t.as_str().to_string())
            .unwrap_or_default();
        let reservation = reservation_of(req, &instance_type, &zone).cloned();
        return Ok(Launched {
            instance_id: id.clone(),
            provider_id: provider_id(&zone, id),
            instance_type,
            zone,
            capacity_type: req.capacity_type,
            unavailable,
            reused: false,
            reservation,
        });
    }
    match other {
        Some(info) if !is_capacity_code(&info.code) => Err(classify_code(info, 400)),
        Some(_) => Err(AwsError::NoCapacity(unavailable)),
        None if !unavailable.is_empty() => Err(AwsError::NoCapacity(unavailable)),
        None => Err(AwsError::bad_response(
            "CreateFleet",
            "no instance and no error returned",
        )),
    }
}

/// The per-override code that means the override's subnet has no free addresses left.
pub const NO_FREE_ADDRESSES: &str = "InsufficientFreeAddressesInSubnet";

/// The subnets CreateFleet reported out of free addresses (override's SubnetId, else the
/// launch subnet of its zone), for the subnet part of the unavailable-offerings cache.
pub fn full_subnets(out: &CreateFleetOutput, req: &LaunchRequest) -> Vec<String> {
    let mut ids: Vec<String> = out
        .errors()
        .iter()
        .filter(|e| e.error_code() == Some(NO_FREE_ADDRESSES))
        .filter_map(|e| {
            let ov = e
                .launch_template_and_overrides()
                .and_then(|l| l.overrides());
            let by_id = ov.and_then(|o| o.subnet_id()).map(str::to_string);
            by_id.or_else(|| Some(req.subnets.get(&override_zone(req, ov)?)?.id.clone()))
        })
        .collect();
    ids.sort();
    ids.dedup();
    ids
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(n_types: usize) -> LaunchRequest {
        let subnet = |zone: &str| Subnet {
            id: format!("subnet-{zone}"),
            zone: zone.into(),
            zone_id: String::new(),
            available_ips: 10,
        };
        let mut options = Vec::new();
        for i in 0..n_types {
            for zone in ["a", "b", "c"] {
                options.push(LaunchOption {
                    instance_type: format!("t{i}.large"),
                    zone: zone.into(),
                    price: 100.0 - i as f64,
                    launch_template: "lt".into(),
                    reservation: None,
                });
            }
        }
        LaunchRequest {
            cluster: "demo".into(),
            nodeclaim_name: "nc".into(),
            nodeclaim_uid: "0b3c1f9e-2f7a-4d8e-9c61-5b2a8e7d4f10".into(),
            nodepool: "default".into(),
            nodeclass: "default".into(),
            capacity_type: CapacityType::Spot,
            options,
            subnets: BTreeMap::from([("a".into(), subnet("a")), ("b".into(), subnet("b"))]),
            tags: BTreeMap::from([("karpenter.sh/nodepool".into(), "evil".into())]),
            prioritized: false,
            placement_group: None,
        }
    }

    #[test]
    fn at_most_sixty_types_cheapest_first_with_subnets_only() {
        let opts = ordered_options(&req(70));
        let mut types: Vec<&str> = opts.iter().map(|o| o.instance_type.as_str()).collect();
        assert_eq!(types[0], "t69.large", "cheapest first");
        assert!(opts.windows(2).all(|w| w[0].price <= w[1].price));
        assert!(
            opts.iter().all(|o| o.zone != "c"),
            "zone without a subnet dropped"
        );
        types.dedup();
        assert_eq!(types.len(), MAX_INSTANCE_TYPES);
        assert_eq!(opts.len(), MAX_INSTANCE_TYPES * 2);
    }

    #[test]
    fn kerf_tags_win_and_token_is_stable() {
        let r = req(1);
        let tags = launch_tags(&r);
        assert_eq!(tags["karpenter.sh/nodepool"], "default");
        assert_eq!(tags["kubernetes.io/cluster/demo"], "owned");
        assert_eq!(tags["eks:eks-cluster-name"], "demo");
        assert_eq!(
            client_token(&r.nodeclaim_uid),
            "kerf-0b3c1f9e-2f7a-4d8e-9c61-5b2a8e7d4f10"
        );
        assert!(client_token(&"x".repeat(100)).len() <= 64);
    }
}
