//! Objects the engine's unit tests build again and again.

use std::sync::Arc;

use kerf_catalog::{CapacityType, Catalog, InstanceType, Offering, Resources};

use crate::labels;
use crate::model::{Pod, PodSpec};

/// `cpu_m` millicores, 8 TiB of memory (never the limit) and `pods` pod slots: a node's
/// capacity.
pub fn node_res(cpu_m: i64, pods: i64) -> Resources {
    let mut r = Resources::new();
    r.set("cpu", cpu_m);
    r.set("memory", 8 << 40);
    r.set("pods", pods * 1000);
    r
}

/// One instance type, `m.xlarge` (4 CPUs, 58 pods), on demand in zone `z1` at $0.20.
pub fn one_type_catalog() -> Arc<Catalog> {
    let it = InstanceType {
        name: "m.xlarge".into(),
        labels: [(labels::ARCH.to_string(), "amd64".to_string())].into(),
        ebs_volume_limit: None,
        offerings: vec![Offering {
            zone: "z1".into(),
            capacity_type: CapacityType::OnDemand,
            price: 0.2,
            available: true,
            partition: None,
            reservation: None,
        }],
        capacity: node_res(4000, 58),
        overhead: Default::default(),
        allocatable: node_res(4000, 58),
    };
    Arc::new(Catalog {
        region: "r".into(),
        instance_types: vec![it],
    })
}

/// A pending pod in `default` asking for `cpu_m` millicores and one pod slot.
pub fn pending_pod(name: &str, cpu_m: i64) -> Pod {
    Pod {
        namespace: "default".into(),
        name: name.into(),
        uid: name.into(),
        phase: "Pending".into(),
        spec: PodSpec {
            requests: Resources([("cpu".to_string(), cpu_m), ("pods".to_string(), 1000)].into()),
            ..Default::default()
        },
        ..Default::default()
    }
}
