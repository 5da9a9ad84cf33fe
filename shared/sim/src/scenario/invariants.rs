//! What must never happen, checked after every step and at the end of a run: an instance
//! running with no NodeClaim (an orphan), a launched NodeClaim whose instance is gone while
//! nobody is deleting it, a NodeClaim launched twice, a pod running on a node outside the
//! zone of a volume it mounts. Read from the store and the simulated EC2, like an auditor
//! with both consoles.

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::api::core::v1::{Node, PersistentVolume, PersistentVolumeClaim, Pod};
use kerf_api::v1::NodeClaim;
use kerf_control::claim;

use crate::world::{World, WorldError};

/// The violations now, one line each (empty: every invariant holds). A NodeClaim being
/// deleted may have lost its instance already: that is the middle of its termination.
pub async fn check(w: &World) -> Result<Vec<String>, WorldError> {
    audit(w, false).await
}

/// [`check`] for a cluster at rest, where no termination is under way: a NodeClaim being
/// deleted must still have its instance too.
pub async fn check_settled(w: &World) -> Result<Vec<String>, WorldError> {
    audit(w, true).await
}

async fn audit(w: &World, settled: bool) -> Result<Vec<String>, WorldError> {
    let claims = w.list::<NodeClaim>().await?;
    let instances = w.cloud.instances();
    let mut out = Vec::new();
    let live: BTreeSet<&str> = instances
        .iter()
        .filter(|i| i.info.state != "terminated")
        .map(|i| i.info.provider_id.as_str())
        .collect();
    let mut owners: BTreeMap<&str, usize> = BTreeMap::new();
    for c in claims.iter() {
        let Some(pid) = claim::provider_id(c) else {
            continue;
        };
        *owners.entry(pid).or_default() += 1;
        let deleting = c.metadata.deletion_timestamp.is_some();
        if !live.contains(pid) && (settled || !deleting) {
            let how = if deleting {
                ""
            } else {
                " and is not being deleted"
            };
            out.push(format!(
                "nodeclaim {} has no running instance{how}",
                claim::name(c)
            ));
        }
    }
    for pid in &live {
        match owners.get(pid).copied().unwrap_or(0) {
            1 => {}
            0 => out.push(format!("instance {pid} runs with no nodeclaim")),
            n => out.push(format!("instance {pid} has {n} nodeclaims")),
        }
    }
    let mut launches: BTreeMap<&str, usize> = BTreeMap::new();
    for i in &instances {
        if let Some(n) = i.info.tags.get("karpenter.sh/nodeclaim") {
            *launches.entry(n.as_str()).or_default() += 1;
        }
    }
    for (name, n) in launches.into_iter().filter(|(_, n)| *n > 1) {
        out.push(format!("nodeclaim {name} was launched {n} times"));
    }
    out.extend(volume_zones(w).await?);
    Ok(out)
}

/// Running pods whose node is outside the zone of a volume they mount.
async fn volume_zones(w: &World) -> Result<Vec<String>, WorldError> {
    let pods = w.list::<Pod>().await?;
    let claims = w.list::<PersistentVolumeClaim>().await?;
    let volumes = w.list::<PersistentVolume>().await?;
    let nodes = w.list::<Node>().await?;
    let zone_of_node: BTreeMap<&str, &str> = nodes
        .iter()
        .filter_map(|n| {
            let zone = n.metadata.labels.as_ref()?.get(kerf_labels::ZONE)?;
            Some((n.metadata.name.as_deref()?, zone.as_str()))
        })
        .collect();
    let volume_of: BTreeMap<(&str, &str), &str> = claims
        .iter()
        .filter_map(|c| {
            let key = (
                c.metadata.namespace.as_deref()?,
                c.metadata.name.as_deref()?,
            );
            Some((key, crate::world::storage::bound_volume(c)?))
        })
        .collect();
    let zones_of: BTreeMap<&str, Vec<String>> = volumes
        .iter()
        .filter_map(|v| {
            let zones = crate::world::storage::volume_zones(v)?;
            Some((v.metadata.name.as_deref()?, zones))
        })
        .collect();
    let mut out = Vec::new();
    for p in pods.iter().filter(|p| running(p)) {
        let ns = p.metadata.namespace.as_deref().unwrap_or_default();
        let name = p.metadata.name.as_deref().unwrap_or_default();
        let node = p.spec.as_ref().and_then(|s| s.node_name.as_deref());
        let Some(zone) = node.and_then(|n| zone_of_node.get(n)) else {
            continue;
        };
        for c in crate::world::storage::pod_claims(p) {
            let Some(pv) = volume_of.get(&(ns, c.as_str())) else {
                continue;
            };
            if let Some(zones) = zones_of.get(pv)
                && !zones.iter().any(|z| z == zone)
            {
                out.push(format!(
                    "pod {ns}/{name} runs in {zone}, its volume {pv} is in {}",
                    zones.join(",")
                ));
            }
        }
    }
    Ok(out)
}

fn running(p: &Pod) -> bool {
    p.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Running")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::world::WorldOptions;

    #[tokio::test]
    async fn orphans_lost_claims_and_double_launches_are_reported() {
        let w = World::start(WorldOptions::default()).await.unwrap();
        assert_eq!(check(&w).await.unwrap(), Vec::<String>::new());
        let tags = BTreeMap::from([("karpenter.sh/nodeclaim".to_string(), "twice".to_string())]);
        let a = w.cloud.start_stray("m5.large", "us-west-2a", tags.clone());
        w.cloud.start_stray("m5.large", "us-west-2a", tags);
        w.sim()
            .unwrap()
            .seed(
                serde_json::json!({"apiVersion": "karpenter.sh/v1", "kind": "NodeClaim",
                "metadata": {"name": "lost"},
                "spec": {"requirements": [], "nodeClassRef": {"group": "karpenter.k8s.aws",
                    "kind": "EC2NodeClass", "name": "default"}},
                "status": {"providerID": "aws:///us-west-2a/i-00000000000000bad"}}),
            )
            .unwrap();
        let mut v = check(&w).await.unwrap();
        v.sort();
        assert_eq!(v.len(), 4, "{v:?}");
        assert!(
            v[0].contains(&a) && v[0].ends_with("runs with no nodeclaim"),
            "{v:?}"
        );
        assert!(v[1].ends_with("runs with no nodeclaim"), "{v:?}");
        assert_eq!(
            v[2],
            "nodeclaim lost has no running instance and is not being deleted"
        );
        assert_eq!(v[3], "nodeclaim twice was launched 2 times");
        // A claim being deleted after its instance went: mid-termination for a run, a
        // violation for a cluster at rest.
        w.sim()
            .unwrap()
            .seed(
                serde_json::json!({"apiVersion": "karpenter.sh/v1", "kind": "NodeClaim",
                "metadata": {"name": "going", "finalizers": ["karpenter.sh/termination"],
                    "deletionTimestamp": "2027-01-01T00:00:00Z"},
                "spec": {"requirements": [], "nodeClassRef": {"group": "karpenter.k8s.aws",
                    "kind": "EC2NodeClass", "name": "default"}},
                "status": {"providerID": "aws:///us-west-2a/i-00000000000000ace"}}),
            )
            .unwrap();
        assert_eq!(check(&w).await.unwrap().len(), 4);
        let settled = check_settled(&w).await.unwrap();
        assert_eq!(settled.len(), 5, "{settled:?}");
        assert!(settled.contains(&"nodeclaim going has no running instance".to_string()));
    }

    #[tokio::test]
    async fn a_pod_running_outside_its_volumes_zone_is_reported() {
        let w = World::start(WorldOptions::default()).await.unwrap();
        let sim = w.sim().unwrap();
        sim.seed(serde_json::json!({"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": "n1", "labels": {"topology.kubernetes.io/zone": "us-west-2b"}}}))
            .unwrap();
        sim.seed(
            serde_json::json!({"apiVersion": "v1", "kind": "PersistentVolume",
            "metadata": {"name": "pv-1"},
            "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"],
                "csi": {"driver": "ebs.csi.aws.com", "volumeHandle": "vol-1"},
                "nodeAffinity": {"required": {"nodeSelectorTerms": [{"matchExpressions": [
                    {"key": "topology.kubernetes.io/zone", "operator": "In",
                     "values": ["us-west-2a"]}]}]}}}}),
        )
        .unwrap();
        sim.seed(
            serde_json::json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
            "metadata": {"name": "data", "namespace": "default"},
            "spec": {"volumeName": "pv-1", "accessModes": ["ReadWriteOnce"]}}),
        )
        .unwrap();
        let pod = |name: &str, phase: &str| {
            serde_json::json!({"apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": name, "namespace": "default"},
                "spec": {"nodeName": "n1", "containers": [{"name": "c", "image": "i"}],
                    "volumes": [{"name": "d", "persistentVolumeClaim": {"claimName": "data"}}]},
                "status": {"phase": phase}})
        };
        sim.seed(pod("waiting", "Pending")).unwrap();
        assert_eq!(check(&w).await.unwrap(), Vec::<String>::new());
        sim.seed(pod("wrong", "Running")).unwrap();
        assert_eq!(
            check(&w).await.unwrap(),
            ["pod default/wrong runs in us-west-2b, its volume pv-1 is in us-west-2a"]
        );
    }
}
