//! Capacity errors and liveness end to end: insufficient capacity on the cheapest offering
//! falls back within the launch; a launch with no capacity anywhere deletes its NodeClaim,
//! caches the offerings and re-plans at once (spot falls back to on-demand); a NodeClaim
//! whose instance never registers is deleted with its instance and replaced; an instance no
//! NodeClaim knows is terminated.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers outside #[test] fns

use std::collections::BTreeMap;

use jiff::SignedDuration;
use k8s_openapi::api::core::v1::ConfigMap;
use kerf_catalog::CapacityType;
use kerf_e2e::world::*;
use kerf_sim::world::cloud::NoCapacity;
use kube::api::Api;

async fn unavailable(w: &kerf_sim::world::World) -> BTreeMap<String, String> {
    let api: Api<ConfigMap> = Api::namespaced(w.client.clone(), kerf_sim::world::KERF_NAMESPACE);
    api.get_opt(kerf_catalog::unavailable::CONFIGMAP_NAME)
        .await
        .unwrap()
        .and_then(|c| c.data)
        .unwrap_or_default()
}

#[tokio::test]
async fn no_capacity_for_the_cheapest_type_falls_back_to_the_next_option() {
    let mut w = getting_started().await.unwrap();
    w.cloud.remove_capacity(NoCapacity {
        instance_type: Some("c6a.2xlarge".into()),
        ..NoCapacity::default()
    });
    w.apply(&inflate(5)).await.unwrap();
    assert!(
        w.run_until(SignedDuration::from_mins(5), |c| all_running(c, 5))
            .await
            .unwrap()
    );
    let instances = w.cloud.instances();
    assert_eq!(instances.len(), 1);
    assert_eq!(
        instances[0].info.instance_type, "c5a.2xlarge",
        "the next cheapest option"
    );
    assert_eq!(
        w.cloud.calls("CreateFleet"),
        1,
        "one call: the fleet tried the options in order"
    );
    let cached = unavailable(&w).await;
    assert!(
        cached.keys().any(|k| k.contains("c6a.2xlarge")),
        "{cached:?}"
    );
    assert!(violations(&w).await.is_empty());
}

#[tokio::test]
async fn no_spot_capacity_anywhere_replans_on_demand_in_the_same_invocation() {
    let mut w = getting_started().await.unwrap();
    let pool = read("examples/getting-started/nodepool.yaml")
        .replace("values: [\"on-demand\"]", "values: [\"spot\", \"on-demand\"]")
        .replace(
            "        - key: karpenter.k8s.aws/instance-generation",
            "        - key: node.kubernetes.io/instance-type\n          operator: In\n          values: [\"c6a.2xlarge\", \"m6a.2xlarge\"]\n        - key: karpenter.k8s.aws/instance-generation",
        );
    w.apply(&pool).await.unwrap();
    w.cloud.remove_capacity(NoCapacity {
        capacity_type: Some(CapacityType::Spot),
        ..NoCapacity::default()
    });
    w.apply(&inflate(5)).await.unwrap();
    w.tick().await.unwrap();
    batch_ends(&w);
    let r = w.deliver().await;
    assert_eq!(r["batchItemFailures"], serde_json::json!([]));
    let cs = claims(&w.client).await;
    assert_eq!(
        cs.len(),
        1,
        "the failed claim is gone, the re-planned one exists"
    );
    assert_eq!(
        cs[0].metadata.labels.clone().unwrap()["karpenter.sh/capacity-type"],
        "on-demand"
    );
    assert_eq!(
        w.cloud.calls("CreateFleet"),
        2,
        "spot once, then on-demand, in one invocation"
    );
    let cached = unavailable(&w).await;
    assert!(
        cached.keys().filter(|k| k.starts_with("spot")).count() >= 2,
        "{cached:?}"
    );
    let published: Vec<String> = w
        .publisher
        .events()
        .iter()
        .map(|e| e.detail_type.clone())
        .collect();
    assert!(
        published.contains(&"NodeClaim Launch Failed".into()),
        "{published:?}"
    );
    assert!(!w.logs.with_message("failed launching nodeclaim").is_empty());
    assert!(
        w.run_until(SignedDuration::from_mins(3), |c| all_running(c, 5))
            .await
            .unwrap()
    );
    assert!(violations(&w).await.is_empty());
}

#[tokio::test]
async fn a_nodeclaim_that_never_registers_is_replaced_after_the_registration_timeout() {
    let mut w = getting_started().await.unwrap();
    w.kubelet_mut().unwrap().paused = true;
    w.apply(&inflate(5)).await.unwrap();
    w.run_for(SignedDuration::from_mins(2)).await.unwrap();
    let first = claims(&w.client).await;
    assert_eq!(first.len(), 1);
    let first_name = first[0].metadata.name.clone().unwrap();
    w.run_for(SignedDuration::from_mins(15)).await.unwrap();
    let gone = w.logs.with_message("terminating due to registration ttl");
    assert_eq!(gone.len(), 1, "{gone:?}");
    assert_eq!(gone[0]["NodeClaim"]["name"], first_name.as_str());
    assert_eq!(gone[0]["reason"], "registration_timeout");
    let instances = w.cloud.instances();
    assert_eq!(
        instances[0].info.state, "terminated",
        "its instance is terminated"
    );
    let now = claims(&w.client).await;
    assert!(
        now.iter()
            .all(|c| c.metadata.name.as_deref() != Some(&first_name))
    );
    w.kubelet_mut().unwrap().paused = false;
    assert!(
        w.run_until(SignedDuration::from_mins(5), |c| all_running(c, 5))
            .await
            .unwrap()
    );
    assert!(
        violations(&w).await.is_empty(),
        "{:?}",
        violations(&w).await
    );
}

/// Whether the stray instance is terminated and no NodeClaim names the dead instance.
async fn collected(w: &kerf_sim::world::World, stray: &str, dead: &str) -> bool {
    let terminated = w
        .cloud
        .instances()
        .iter()
        .any(|i| i.info.id == stray && i.info.state == "terminated");
    terminated
        && claims(&w.client)
            .await
            .iter()
            .all(|c| kerf_control::claim::provider_id(c) != Some(dead))
}

on_both! {
async fn orphan_instances_and_claims_without_instances_are_collected(on) {
    let mut w = getting_started_on(on, kerf_sim::world::WorldOptions::default()).await;
    w.apply(&inflate(5)).await.unwrap();
    assert!(
        w.run_until(SignedDuration::from_mins(3), |c| all_running(c, 5))
            .await
            .unwrap()
    );
    let tags = BTreeMap::from([(
        "karpenter.sh/nodeclaim".to_string(),
        "default-gone1".to_string(),
    )]);
    let stray = w.cloud.start_stray("m5.large", "us-west-2a", tags);
    // The instance of the running claim dies behind Kerf's back.
    let victim = w
        .cloud
        .instances()
        .into_iter()
        .find(|i| i.info.id != stray)
        .unwrap();
    use kerf_control::ports::Cloud;
    w.cloud
        .terminate(std::slice::from_ref(&victim.info.id))
        .await
        .unwrap();
    // The orphan's grace period (2 minutes) and a sweep after it.
    let end = w.now() + SignedDuration::from_mins(5);
    let mut quiet = false;
    while w.now() < end && !collected(&w, &stray, &victim.info.provider_id).await {
        quiet = !w.step_toward(quiet, end).await.unwrap();
    }
    let states: BTreeMap<String, String> = w
        .cloud
        .instances()
        .iter()
        .map(|i| (i.info.id.clone(), i.info.state.clone()))
        .collect();
    assert_eq!(
        states[&stray], "terminated",
        "the orphan is terminated after the grace period"
    );
    assert!(
        !w.logs
            .with_message("garbage collected instance with no nodeclaim")
            .is_empty()
    );
    assert!(
        !w.logs
            .with_message("garbage collecting nodeclaim with no cloudprovider representation")
            .is_empty()
    );
    assert!(
        claims(&w.client)
            .await
            .iter()
            .all(|c| kerf_control::claim::provider_id(c) != Some(victim.info.provider_id.as_str()))
    );
    assert!(
        w.run_until(SignedDuration::from_mins(5), |c| all_running(c, 5))
            .await
            .unwrap(),
        "{:?}",
        not_running(&w.client).await
    );
    assert!(
        violations(&w).await.is_empty(),
        "{:?}",
        violations(&w).await
    );
}
}

/// A launch template no launch has used for an hour is deleted by the sweep (a failed cleanup
/// is retried by the next one); one in use is kept; the next launch makes it again.
#[tokio::test]
async fn launch_templates_unused_for_an_hour_are_deleted_and_made_again_when_needed() {
    let mut w = getting_started_with(coarse()).await.unwrap();
    w.apply(&inflate(5)).await.unwrap();
    assert!(
        w.run_until(SignedDuration::from_mins(3), |c| all_running(c, 5))
            .await
            .unwrap()
    );
    let made = w.cloud.templates();
    assert_eq!(made.len(), 1, "one class, one AMI: {made:?}");
    // Used 40 minutes ago: kept.
    w.run_for(SignedDuration::from_mins(40)).await.unwrap();
    assert_eq!(w.cloud.templates(), made);
    assert!(w.logs.with_message("deleted launch template").is_empty());
    // A cleanup EC2 throttles is logged and left to the next sweep.
    let throttled = kerf_control::ports::CloudError::Throttled("RequestLimitExceeded".into());
    w.cloud.fail("DeleteLaunchTemplate", throttled, 1);
    // Unused for over an hour: deleted, and logged with its name.
    w.run_for(SignedDuration::from_mins(25)).await.unwrap();
    let failed = w
        .logs
        .with_message("could not delete unused launch templates");
    assert_eq!(failed.len(), 1, "{failed:?}");
    assert!(w.cloud.templates().is_empty());
    let deleted = w.logs.with_message("deleted launch template");
    assert_eq!(deleted.len(), 1, "{deleted:?}");
    assert_eq!(deleted[0]["name"], made[0].as_str());
    assert_eq!(deleted[0]["controller"], "launchtemplate.garbagecollection");
    // A new launch makes it again.
    w.apply(&inflate(15)).await.unwrap();
    assert!(
        w.run_until(SignedDuration::from_mins(3), |c| all_running(c, 15))
            .await
            .unwrap()
    );
    assert_eq!(w.cloud.templates(), made);
}
