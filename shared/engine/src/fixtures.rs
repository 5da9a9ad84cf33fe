//! Objects the engine's unit tests build again and again.

use kerf_catalog::Resources;

use crate::model::{Pod, PodSpec};

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
