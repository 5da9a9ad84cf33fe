//! At-least-once delivery: with every SQS batch of the provisioner, termination and
//! interruption functions handled twice, the second time in reverse order, a cluster's life
//! (scale up, a spot interruption, scale down and consolidation) ends exactly where single
//! delivery ends: the same instances bought, the same nodes, every pod running, no orphan.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers outside #[test] fns

use std::collections::BTreeMap;

use jiff::SignedDuration;
use kerf_e2e::world::*;
use kerf_sim::world::WorldOptions;

#[derive(Debug, PartialEq)]
struct End {
    /// Instance types of every instance ever launched.
    launched: BTreeMap<String, usize>,
    /// Instance types of the instances running at the end.
    running: BTreeMap<String, usize>,
    claims: usize,
    pods_running: usize,
    interruptions: usize,
}

async fn life(duplicate: bool) -> End {
    let mut w = getting_started_with(WorldOptions {
        duplicate_deliveries: duplicate,
        ..coarse()
    })
    .await
    .unwrap();
    let spot = read("examples/getting-started/nodepool.yaml")
        .replace("values: [\"on-demand\"]", "values: [\"spot\"]");
    w.apply(&spot).await.unwrap();
    w.apply(&inflate(12)).await.unwrap();
    let up = w
        .run_until(SignedDuration::from_mins(5), |c| all_running(c, 12))
        .await
        .unwrap();
    assert!(up, "12 pods run");
    let first = claims(&w.client).await;
    let c = &first[0];
    let name = c.metadata.name.clone().unwrap();
    let pid = c
        .status
        .as_ref()
        .and_then(|s| s.provider_id.clone())
        .unwrap();
    let id = pid.rsplit('/').next().unwrap().to_string();
    w.interrupt(&[id]).await;
    let ok = replaced(&mut w, &name, 12, SignedDuration::from_mins(2))
        .await
        .unwrap();
    assert!(
        ok,
        "the interrupted node is replaced and its pods run again in time"
    );
    w.apply(&inflate(3)).await.unwrap();
    w.run_for(SignedDuration::from_mins(20)).await.unwrap();
    let count = |it: &mut dyn Iterator<Item = String>| {
        let mut m = BTreeMap::new();
        for t in it {
            *m.entry(t).or_insert(0) += 1;
        }
        m
    };
    let all = w.cloud.instances();
    End {
        launched: count(&mut all.iter().map(|i| i.info.instance_type.clone())),
        running: count(
            &mut all
                .iter()
                .filter(|i| i.info.state == "running")
                .map(|i| i.info.instance_type.clone()),
        ),
        claims: claims(&w.client).await.len(),
        pods_running: pods(&w.client)
            .await
            .iter()
            .filter(|p| p.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Running"))
            .count(),
        interruptions: w.interruptions_handled,
    }
}

#[tokio::test]
async fn every_batch_twice_and_out_of_order_ends_where_single_delivery_ends() {
    let once = life(false).await;
    let twice = life(true).await;
    assert_eq!(once, twice, "duplicated deliveries changed the outcome");
    assert_eq!(once.pods_running, 3);
    assert_eq!(once.interruptions, 1);
    assert_eq!(
        once.running.values().sum::<usize>(),
        once.claims,
        "one running instance per NodeClaim: no orphan, no instance without its claim"
    );
    assert!(
        once.launched.values().sum::<usize>() > once.claims,
        "consolidation happened"
    );
}
