use crate::fixtures::{node_res as res, one_type_catalog};
use crate::model::{Effect, NodePool, PodSpec};
use crate::{Options, provision};

use super::*;

fn snapshot() -> Snapshot {
    let pool = NodePool {
        name: "default".into(),
        catalog: one_type_catalog(),
        ..Default::default()
    };
    let node = Node {
        name: "ip-10-0-0-9".into(),
        provider_id: "aws:///z1/i-9".into(),
        labels: [
            (labels::NODEPOOL.to_string(), "default".to_string()),
            (labels::INSTANCE_TYPE.to_string(), "m.xlarge".to_string()),
            (labels::ZONE.to_string(), "z1".to_string()),
        ]
        .into(),
        taints: vec![Taint {
            key: labels::UNREGISTERED_TAINT.into(),
            value: String::new(),
            effect: Effect::NoExecute,
        }],
        allocatable: res(4000, 58),
        capacity: res(4000, 58),
        ..Default::default()
    };
    let pod = Pod {
        namespace: "default".into(),
        name: "web".into(),
        phase: "Pending".into(),
        spec: PodSpec {
            requests: res(1000, 1),
            ..Default::default()
        },
        ..Default::default()
    };
    Snapshot {
        pods: vec![pod],
        nodes: vec![node],
        node_pools: vec![pool],
        ..Default::default()
    }
}

#[test]
fn a_registering_node_no_claim_owns_is_not_capacity() {
    let snap = snapshot();
    let plan = provision(&snap, &Options::default());
    assert!(plan.nominations.is_empty(), "{:?}", plan.nominations);
    assert_eq!(plan.launches.len(), 1, "the pod needs a new claim");
}

#[test]
fn a_registering_node_its_claim_owns_takes_the_pod() {
    for by_name in [false, true] {
        let mut snap = snapshot();
        snap.node_claims.push(NodeClaim {
            name: "default-abc".into(),
            node_pool: "default".into(),
            provider_id: if by_name {
                String::new()
            } else {
                "aws:///z1/i-9".into()
            },
            node_name: by_name.then(|| "ip-10-0-0-9".to_string()),
            allocatable: res(4000, 58),
            capacity: res(4000, 58),
            ..Default::default()
        });
        let plan = provision(&snap, &Options::default());
        assert!(plan.launches.is_empty(), "{:?}", plan.launches);
        assert_eq!(plan.nominations.len(), 1);
        // A claim being deleted owns nothing.
        snap.node_claims[0].deleting = true;
        let plan = provision(&snap, &Options::default());
        assert_eq!(plan.launches.len(), 1);
    }
}
