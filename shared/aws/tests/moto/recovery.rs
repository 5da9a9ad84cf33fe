//! Launch recovery against moto behind the fault proxy: a launch template deleted under the
//! launcher is re-created and the launch retried once; a subnet out of free addresses is
//! cached (with its offering) and the next launch's subnet choice avoids it.

use jiff::Timestamp;
use kerf_aws::launch::{launch, launch_ensuring, launch_recording};
use kerf_aws::network::{self, usable_zonal_subnets};
use kerf_aws::{AwsError, InMemoryOfferingCacheStore, OfferingKey, UnavailableOfferingsStore};
use kerf_aws::{fleet, launch_template};
use kerf_catalog::CapacityType;

use crate::seed::{self, discovery_term, launch_setup, lt_spec, option, request};
use crate::support::clients;
use crate::support::moto::fresh;
use crate::support::proxy::Proxy;

const LT_MISSING: &str = "InvalidLaunchTemplateName.NotFoundException";

fn t0() -> Timestamp {
    "2026-01-01T00:00:00Z".parse().expect("time")
}

#[tokio::test]
async fn a_missing_launch_template_is_re_created_and_the_launch_retried_once() {
    let (_g, moto) = fresh().await;
    let proxy = Proxy::start(&moto.url).await;
    let c = clients(&proxy.url).await;
    seed::tag_subnets(&c, &["us-west-2a", "us-west-2b"]).await;
    let sg = seed::security_group(&c, "kerf-nodes").await;
    let all = network::subnets(&c.ec2, &[discovery_term()]).await.unwrap();
    let subnets = network::zonal_subnets(&all);
    let spec = lt_spec("#!/bin/bash\necho hi", vec![sg]);
    let name = launch_template::ensure(&c.ec2, &spec, jiff::Timestamp::now())
        .await
        .unwrap()
        .name;
    c.ec2
        .delete_launch_template()
        .launch_template_name(&name)
        .send()
        .await
        .unwrap();
    assert!(
        launch_template::find(&c.ec2, &name)
            .await
            .unwrap()
            .is_none()
    );
    let opts = vec![option("m5.large", "us-west-2a", 0.1, &name)];
    // Without the specs the NotFound reaches the caller, typed and not retried.
    proxy.error("CreateFleet", 400, LT_MISSING, 1);
    let req = request("nc-lt-1", CapacityType::OnDemand, opts.clone(), &subnets);
    let e = launch(&c.ec2, &req).await.unwrap_err();
    assert!(e.is_not_found() && !e.is_retryable(), "{e:?}");
    assert_eq!(proxy.count("CreateFleet"), 1);
    // With them, the template is ensured again and the launch retried once.
    proxy.error("CreateFleet", 400, LT_MISSING, 1);
    let req = request("nc-lt-2", CapacityType::OnDemand, opts.clone(), &subnets);
    let l = launch_ensuring(
        &c.ec2,
        &req,
        std::slice::from_ref(&spec),
        jiff::Timestamp::now(),
    )
    .await
    .unwrap();
    assert_eq!((l.instance_type.as_str(), l.reused), ("m5.large", false));
    assert_eq!(proxy.count("CreateFleet"), 3);
    assert!(
        launch_template::find(&c.ec2, &name)
            .await
            .unwrap()
            .is_some()
    );
    // Only once: a template that stays missing is an error, not a loop.
    proxy.error("CreateFleet", 400, LT_MISSING, 2);
    let req = request("nc-lt-3", CapacityType::OnDemand, opts, &subnets);
    let e = launch_ensuring(
        &c.ec2,
        &req,
        std::slice::from_ref(&spec),
        jiff::Timestamp::now(),
    )
    .await
    .unwrap_err();
    assert!(matches!(e, AwsError::NotFound(_)), "{e:?}");
    assert_eq!(proxy.count("CreateFleet"), 5);
}

#[tokio::test]
async fn a_subnet_out_of_addresses_is_cached_and_avoided() {
    let (_g, moto) = fresh().await;
    let proxy = Proxy::start(&moto.url).await;
    let c = clients(&proxy.url).await;
    let (subnets, lt) = launch_setup(&c).await;
    let full = subnets["us-west-2a"].id.clone();
    proxy.fleet_error(
        "m5.large",
        Some("us-west-2a"),
        None,
        fleet::NO_FREE_ADDRESSES,
    );
    let opts = vec![
        option("m5.large", "us-west-2a", 0.1, &lt),
        option("m5.large", "us-west-2b", 0.2, &lt),
    ];
    let store = InMemoryOfferingCacheStore::new();
    let req = request("nc-ip-1", CapacityType::OnDemand, opts, &subnets);
    let l = launch_recording(&c.ec2, &store, &req, t0()).await.unwrap();
    assert_eq!(l.zone, "us-west-2b");
    let cache = UnavailableOfferingsStore::load(&store, t0()).await.unwrap();
    assert!(cache.is_subnet_unavailable(&full, t0()), "{cache:?}");
    let offering = OfferingKey::new(CapacityType::OnDemand, "m5.large", "us-west-2a");
    assert!(
        cache.is_unavailable(&offering, t0()),
        "as Karpenter: offering too"
    );
    // The zone's only subnet is full: the next subnet choice leaves the zone out.
    let all = network::subnets(&c.ec2, &[discovery_term()]).await.unwrap();
    let next = usable_zonal_subnets(&all, &cache, t0());
    assert!(!next.contains_key("us-west-2a"), "{next:?}");
    assert!(next.contains_key("us-west-2b") && next.contains_key("us-west-2c"));
    let later = t0() + kerf_aws::ice::UNAVAILABLE_TTL;
    let cache = UnavailableOfferingsStore::load(&store, later)
        .await
        .unwrap();
    assert_eq!(
        usable_zonal_subnets(&all, &cache, later)["us-west-2a"].id,
        full
    );
}
