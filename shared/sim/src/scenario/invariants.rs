//! What must never happen, checked after every step and at the end of a run: an instance
//! running with no NodeClaim (an orphan), a launched NodeClaim whose instance is gone while
//! nobody is deleting it, a NodeClaim launched twice. Read from the store and the simulated
//! EC2, like an auditor with both consoles.

use std::collections::{BTreeMap, BTreeSet};

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
    Ok(out)
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
}
