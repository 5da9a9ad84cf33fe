//! Why no instance type of a NodePool satisfies a pod: the pod's requirement and the
//! NodePool's that exclude each other, named as the user wrote them
//! (`the pod's node.kubernetes.io/instance-type In [t4g.2xlarge] against the NodePool's
//! karpenter.k8s.aws/instance-category In [c,m,r]`). Computed only when a pod fails.

use kerf_catalog::InstanceType;

use crate::labels;
use crate::pools::{NOT_OF_THE_TYPE, PoolCtx, type_label as label, type_satisfies as satisfies};
use crate::requirements::{Requirement, Requirements};

/// Why `pool` has no instance type for a pod requiring `pod` (the pool's own requirements
/// and the pod's are compatible key by key, yet no type satisfies both).
pub fn explain(pool: &PoolCtx<'_>, pod: &Requirements) -> String {
    let catalog = &pool.np.catalog;
    for (key, req) in pod.iter() {
        if NOT_OF_THE_TYPE.contains(&key.as_str()) {
            continue;
        }
        let allowed: Vec<&InstanceType> = catalog
            .instance_types
            .iter()
            .filter(|it| satisfies(it, &catalog.region, key, req))
            .collect();
        if allowed.is_empty() {
            return format!("no instance type in the catalog has the pod's {key} {req}");
        }
        // The pool's types are sorted by name (see `pools::prepare_one`).
        if allowed.iter().any(|it| {
            pool.types
                .binary_search_by(|t| t.it.name.as_str().cmp(&it.name))
                .is_ok()
        }) {
            continue;
        }
        return against_pool(pool, key, req, &allowed);
    }
    let named: Vec<String> = pod
        .iter()
        .filter(|(k, _)| k.as_str() != labels::NODEPOOL)
        .map(|(k, r)| format!("{k} {r}"))
        .collect();
    format!(
        "no instance type satisfies the pod's requirements together ({}) with an available \
         offering among the nodepool's {} instance types",
        named.join(", "),
        pool.types.len()
    )
}

/// The pod's `key req` allows only `allowed`, none of which the pool may launch: the pool's
/// requirement that excludes them, or that their offerings are not available to it.
fn against_pool(
    pool: &PoolCtx<'_>,
    key: &str,
    req: &Requirement,
    allowed: &[&InstanceType],
) -> String {
    let region = &pool.np.catalog.region;
    let pod_side = format!("the pod's {key} {req}");
    let excluding = pool.reqs.iter().find(|(pk, pr)| {
        !NOT_OF_THE_TYPE.contains(&pk.as_str())
            && allowed.iter().all(|it| !satisfies(it, region, pk, pr))
    });
    let example = allowed[0];
    match excluding {
        Some((pk, pr)) => {
            let has = label(example, region, pk)
                .map_or_else(|| format!("no {pk} label"), |v| format!("{pk}={v}"));
            format!(
                "{pod_side} against the nodepool's {pk} {pr} ({} has {has})",
                example.name
            )
        }
        None => format!(
            "{pod_side} allows only instance types ({}) with no available offering the \
             nodepool's requirements allow",
            allowed
                .iter()
                .take(3)
                .map(|it| it.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}
