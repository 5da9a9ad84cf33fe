use std::sync::Arc;

use kerf_catalog::{CapacityType, Catalog, InstanceType, Offering, Resources};

use crate::model::{Effect, NodePool, PodSpec};
use crate::{Options, provision};

use super::*;

fn res(cpu_m: i64, pods: i64) -> Resources {
    let mut r = Resources::new();
    r.set("cpu", cpu_m);
    r.set("memory", 8 << 40);
    r.set("pods", pods * 1000);
    r
}

fn snapshot() -> Snapshot {
    let it = InstanceType {
        name: "m.xlarge".into(),
        labels: [(labels::ARCH.to_string(), "amd64".to_string())].into(),
        ebs_volume_limit: None,
        offerings: vec![Offering {
            zone: "z1".into(),
            capacity_type: CapacityType::OnDemand,
            price: 0.2,
            available: true,
        }],
        capacity: res(4000, 58),
        overhead: Default::default(),
        allocatable: res(4000, 58),
    };
    let pool = NodePool {
        name: "default".into(),
        catalog: Arc::new(Catalog {
            region: "r".into(),
            instance_types: vec![it],
        }),
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
