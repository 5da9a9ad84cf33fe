//! Launching against moto (behind the fault proxy): tags and ClientToken, idempotent retries,
//! ICE → cache → re-plan, expiry, NoCapacity, terminate idempotency and GC listing.

use std::collections::{BTreeMap, BTreeSet};

use jiff::{SignedDuration, Timestamp};
use kerf_aws::discovery::Discovery;
use kerf_aws::launch::{launch, launch_recording, options_from_catalog};
use kerf_aws::pricing::Prices;
use kerf_aws::{AwsError, InMemoryOfferingCacheStore, OfferingKey, fleet, ice, instances};
use kerf_catalog::{CapacityType, NodeClassSettings};

use crate::seed::{self, launch_setup, option, request};
use crate::support::moto::fresh;
use crate::support::proxy::Proxy;
use crate::support::{CLUSTER, REGION, clients, form, strings};

const TYPES: &[&str] = &["m5.large", "c5.large", "m5.xlarge"];
const ZONES: &[&str] = &["us-west-2a", "us-west-2b", "us-west-2c"];

fn t0() -> Timestamp {
    "2026-01-01T00:00:00Z".parse().expect("time")
}

/// Deterministic prices: spot m5.large cheapest, cheapest in 2a.
fn prices() -> Prices {
    let od = [
        ("m5.large", 0.096),
        ("c5.large", 0.085),
        ("m5.xlarge", 0.192),
    ];
    let mut spot = BTreeMap::new();
    for (i, (t, p)) in od.iter().enumerate() {
        for (j, z) in ZONES.iter().enumerate() {
            let base = if *t == "m5.large" { 0.02 } else { p * 0.4 };
            spot.insert(
                (t.to_string(), z.to_string()),
                base + 0.001 * (i + j) as f64,
            );
        }
    }
    Prices {
        on_demand: od.iter().map(|(t, p)| (t.to_string(), *p)).collect(),
        spot: Some(spot),
        on_demand_fallback: false,
    }
}

fn overrides(f: &[(String, String)]) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for (k, v) in f {
        if k.ends_with(".InstanceType") {
            let zone_key = k.replace(".InstanceType", ".AvailabilityZone");
            out.push((
                v.clone(),
                form::get(f, &zone_key).unwrap_or_default().to_string(),
            ));
        }
    }
    out
}

/// The form's `(instance type, priority)` per override, in request order.
fn priorities(f: &[(String, String)]) -> Vec<(String, Option<String>)> {
    f.iter()
        .filter(|(k, _)| k.ends_with(".InstanceType"))
        .map(|(k, v)| {
            let key = k.replace(".InstanceType", ".Priority");
            (v.clone(), form::get(f, &key).map(str::to_string))
        })
        .collect()
}

#[tokio::test]
async fn an_overlaid_price_launches_by_priority_as_karpenters_provider_does() {
    let (_g, moto) = fresh().await;
    let proxy = Proxy::start(&moto.url).await;
    let c = clients(&proxy.url).await;
    let (subnets, lt) = launch_setup(&c).await;
    // m5.xlarge is the cheapest by the overlay, dearest by EC2's list.
    let opts = vec![
        option("c5.large", "us-west-2b", 0.085, &lt),
        option("m5.xlarge", "us-west-2a", 0.01, &lt),
    ];
    for (i, ct) in [CapacityType::OnDemand, CapacityType::Spot]
        .into_iter()
        .enumerate()
    {
        let mut req = request(&format!("nc-p{i}"), ct, opts.clone(), &subnets);
        req.prioritized = true;
        launch(&c.ec2, &req).await.unwrap();
        let sent = &proxy.forms("CreateFleet")[i];
        let (key, want) = match ct {
            CapacityType::Spot => (
                "SpotOptions.AllocationStrategy",
                "capacity-optimized-prioritized",
            ),
            _ => ("OnDemandOptions.AllocationStrategy", "prioritized"),
        };
        assert_eq!(form::get(sent, key), Some(want), "{ct:?}");
        assert_eq!(
            priorities(sent),
            [
                ("m5.xlarge".to_string(), Some("0.01".to_string())),
                ("c5.large".to_string(), Some("0.085".to_string()))
            ],
            "{ct:?}: the overlaid price is each override's priority, cheapest first"
        );
    }
    let mut plain = request("nc-plain", CapacityType::OnDemand, opts, &subnets);
    plain.prioritized = false;
    launch(&c.ec2, &plain).await.unwrap();
    let sent = &proxy.forms("CreateFleet")[2];
    assert_eq!(
        form::get(sent, "OnDemandOptions.AllocationStrategy"),
        Some("lowest-price")
    );
    assert!(
        priorities(sent).iter().all(|(_, p)| p.is_none()),
        "no priorities without an overlay"
    );
}

#[tokio::test]
async fn launch_tags_client_token_and_idempotent_retry() {
    let (_g, moto) = fresh().await;
    let proxy = Proxy::start(&moto.url).await;
    let c = clients(&proxy.url).await;
    let (subnets, lt) = launch_setup(&c).await;
    let opts = vec![
        option("c5.large", "us-west-2b", 0.085, &lt),
        option("m5.large", "us-west-2a", 0.096, &lt),
    ];
    let req = request("nc-1", CapacityType::OnDemand, opts, &subnets);
    let first = launch(&c.ec2, &req).await.unwrap();
    assert_eq!(
        (first.instance_type.as_str(), first.zone.as_str()),
        ("c5.large", "us-west-2b")
    );
    assert_eq!(
        first.provider_id,
        format!("aws:///us-west-2b/{}", first.instance_id)
    );
    assert!(!first.reused);
    let again = launch(&c.ec2, &req).await.unwrap();
    assert_eq!(again.instance_id, first.instance_id);
    assert!(again.reused);
    assert_eq!(
        proxy.count("CreateFleet"),
        1,
        "the retry must not create a second fleet"
    );
    let sent = &proxy.forms("CreateFleet")[0];
    assert_eq!(
        form::get(sent, "ClientToken"),
        Some(fleet::client_token(&req.nodeclaim_uid).as_str())
    );
    assert_eq!(form::get(sent, "Type"), Some("instant"));
    assert_eq!(
        form::get(sent, "OnDemandOptions.AllocationStrategy"),
        Some("lowest-price")
    );
    let info = instances::describe(&c.ec2, std::slice::from_ref(&first.instance_id))
        .await
        .unwrap();
    assert_eq!(
        info[0].subnet_id.as_deref(),
        Some(subnets["us-west-2b"].id.as_str()),
        "the instance's subnet (subnet drift reads it)"
    );
    // moto reports no security groups for fleet instances; with none reported, drift
    // skips the security-group check (`kerf_control::instances`).
    let tags = &info[0].tags;
    for (k, v) in [
        (format!("kubernetes.io/cluster/{CLUSTER}"), "owned"),
        ("karpenter.sh/nodepool".into(), "default"),
        ("karpenter.sh/nodeclaim".into(), "nc-1"),
        ("karpenter.k8s.aws/ec2nodeclass".into(), "default"),
        ("eks:eks-cluster-name".into(), CLUSTER),
        ("team".into(), "platform"),
    ] {
        assert_eq!(tags.get(&k).map(String::as_str), Some(v), "tag {k}");
    }
}

#[tokio::test]
async fn moto_ignores_client_token_so_the_adapter_refinds_by_tag() {
    let (_g, moto) = fresh().await;
    let c = clients(&moto.url).await;
    let (subnets, lt) = launch_setup(&c).await;
    let req = request(
        "nc-raw",
        CapacityType::OnDemand,
        vec![option("m5.large", "us-west-2a", 0.1, &lt)],
        &subnets,
    );
    let call = || async {
        fleet::create_fleet(&c.ec2, &req)
            .unwrap()
            .send()
            .await
            .unwrap()
    };
    let (a, b) = (call().await, call().await);
    let id = |o: &aws_sdk_ec2::operation::create_fleet::CreateFleetOutput| {
        o.instances()[0].instance_ids()[0].clone()
    };
    assert_ne!(
        id(&a),
        id(&b),
        "moto 5.2.1 does not honour ClientToken (if this fails, it now does)"
    );
}

#[tokio::test]
async fn ice_is_cached_avoided_and_expires() {
    let (_g, moto) = fresh().await;
    let proxy = Proxy::start(&moto.url).await;
    let c = clients(&proxy.url).await;
    let (subnets, lt) = launch_setup(&c).await;
    let zones: BTreeSet<String> = subnets.keys().cloned().collect();
    let d = Discovery::new(REGION, strings(TYPES));
    let (settings, p) = (NodeClassSettings::default(), prices());
    let (catalog, _) = d
        .catalog(&c.ec2, t0(), Some(&zones), &p, &settings)
        .await
        .unwrap();
    let plan = |cat: &kerf_catalog::Catalog| {
        options_from_catalog(cat, &strings(TYPES), CapacityType::Spot, |_| {
            Some(lt.clone())
        })
    };
    proxy.ice("m5.large", Some("us-west-2a"), Some("spot"));
    let store = InMemoryOfferingCacheStore::new();
    let req = request("nc-ice-1", CapacityType::Spot, plan(&catalog), &subnets);
    let l = launch_recording(&c.ec2, &store, &req, t0()).await.unwrap();
    let blocked = OfferingKey::new(CapacityType::Spot, "m5.large", "us-west-2a");
    assert_eq!(l.unavailable, vec![blocked.clone()]);
    let sent = &proxy.forms("CreateFleet")[0];
    assert_eq!(
        form::get(sent, "SpotOptions.AllocationStrategy"),
        Some("price-capacity-optimized")
    );
    assert_eq!(
        form::get(
            sent,
            "TargetCapacitySpecification.DefaultTargetCapacityType"
        ),
        Some("spot")
    );
    assert_eq!(
        form::get(sent, "TargetCapacitySpecification.TotalTargetCapacity"),
        Some("1")
    );
    assert_eq!(
        (l.instance_type.as_str(), l.capacity_type),
        ("m5.large", CapacityType::Spot)
    );
    assert_ne!(l.zone, "us-west-2a");
    // The next plan (10 s later) no longer offers the blocked offering.
    let now = t0() + SignedDuration::from_secs(10);
    let mut cat = catalog.clone();
    ice::load(&store, now).await.unwrap().apply(&mut cat, now);
    let opts = plan(&cat);
    assert!(
        !opts
            .iter()
            .any(|o| o.instance_type == "m5.large" && o.zone == "us-west-2a")
    );
    launch(
        &c.ec2,
        &request("nc-ice-2", CapacityType::Spot, opts, &subnets),
    )
    .await
    .unwrap();
    let sent = overrides(proxy.forms("CreateFleet").last().unwrap());
    assert!(
        !sent.contains(&("m5.large".into(), "us-west-2a".into())),
        "{sent:?}"
    );
    assert_eq!(sent[0].0, "m5.large", "cheapest first");
    // Three minutes after the failure the entry has expired.
    let later = t0() + ice::UNAVAILABLE_TTL;
    let mut cat = catalog.clone();
    let cache = ice::load(&store, later).await.unwrap();
    assert!(cache.is_empty());
    cache.apply(&mut cat, later);
    assert!(
        plan(&cat)
            .iter()
            .any(|o| o.instance_type == "m5.large" && o.zone == "us-west-2a")
    );
}

#[tokio::test]
async fn every_override_failing_for_capacity_is_no_capacity() {
    let (_g, moto) = fresh().await;
    let proxy = Proxy::start(&moto.url).await;
    let c = clients(&proxy.url).await;
    let (subnets, lt) = launch_setup(&c).await;
    for t in ["m5.large", "c5.large"] {
        proxy.ice(t, None, None);
    }
    let opts = vec![
        option("m5.large", "us-west-2a", 0.1, &lt),
        option("c5.large", "us-west-2b", 0.2, &lt),
    ];
    let store = InMemoryOfferingCacheStore::new();
    let err = launch_recording(
        &c.ec2,
        &store,
        &request("nc-x", CapacityType::OnDemand, opts, &subnets),
        t0(),
    )
    .await
    .unwrap_err();
    let AwsError::NoCapacity(keys) = err else {
        panic!("expected NoCapacity, got {err:?}")
    };
    assert_eq!(keys.len(), 2);
    assert!(!AwsError::NoCapacity(keys).is_retryable());
    assert_eq!(ice::load(&store, t0()).await.unwrap().len(), 2);
    let live = instances::list_cluster(&c.ec2, CLUSTER).await.unwrap();
    assert!(live.is_empty(), "nothing launched");
}

#[tokio::test]
async fn terminate_is_idempotent_and_gc_lists_cluster_instances() {
    let (_g, moto) = fresh().await;
    let c = clients(&moto.url).await;
    let (subnets, lt) = launch_setup(&c).await;
    let mut ids = Vec::new();
    for nc in ["nc-a", "nc-b"] {
        let opts = vec![option("m5.large", "us-west-2a", 0.1, &lt)];
        ids.push(
            launch(&c.ec2, &request(nc, CapacityType::OnDemand, opts, &subnets))
                .await
                .unwrap()
                .instance_id,
        );
    }
    c.ec2
        .run_instances()
        .image_id(seed::EKS_AMI)
        .min_count(1)
        .max_count(1)
        .send()
        .await
        .unwrap();
    let listed: Vec<String> = instances::list_cluster(&c.ec2, CLUSTER)
        .await
        .unwrap()
        .into_iter()
        .map(|i| i.id)
        .collect();
    let mut expected = ids.clone();
    expected.sort();
    assert_eq!(listed, expected, "only the cluster's tagged instances");
    let one = vec![ids[0].clone()];
    instances::terminate(&c.ec2, &one).await.unwrap();
    instances::terminate(&c.ec2, &one).await.unwrap();
    instances::terminate(&c.ec2, &strings(&["i-0123456789abcdef0"]))
        .await
        .unwrap();
    instances::terminate(&c.ec2, &[ids[1].clone(), "i-0123456789abcdef0".into()])
        .await
        .unwrap();
    let left = instances::list_cluster(&c.ec2, CLUSTER).await.unwrap();
    assert!(left.iter().all(|i| i.state == "shutting-down"), "{left:?}");
    let st = instances::status(&c.ec2, &ids).await.unwrap();
    assert_eq!(st.len(), 2);
}
