//! What the real Karpenter is shown of a scenario: the instance-types file its KWOK provider
//! reads (Kerf's catalog with the scenario's spot prices and capacity), the CRDs it serves,
//! and each applied document as its side takes it (an EC2NodeClass played by a
//! KWOKNodeClass).

use std::path::Path;

use jiff::SignedDuration;
use kerf_catalog::Catalog;
use kerf_catalog::settings::NodeClassSettings;
use kube::Client;
use serde_json::{Value, json};

use super::{KarpenterError, catalog};
use crate::world::cloud::NoCapacity;
use crate::world::prices::Prices;
use crate::world::{WorldError, wiring};

/// The group and kind of the KWOK provider's node class.
pub(super) const KWOK_GROUP: &str = "karpenter.kwok.sh";
pub(super) const KWOK_CLASS: &str = "KWOKNodeClass";

pub(super) fn cluster_err(e: impl std::fmt::Display) -> WorldError {
    WorldError::Cluster(e.to_string())
}

/// The catalog Karpenter is told about: the bundled one of `region` with the spot prices
/// moved and the offerings without capacity taken out.
fn catalog_now(
    region: &str,
    prices: &Prices,
    no_capacity: &[NoCapacity],
) -> Result<Catalog, WorldError> {
    let mut c =
        kerf_catalog::bundled(region, &NodeClassSettings::default()).map_err(cluster_err)?;
    prices.apply(&mut c);
    for it in &mut c.instance_types {
        for o in &mut it.offerings {
            if no_capacity
                .iter()
                .any(|n| n.covers(o.capacity_type, &it.name, &o.zone))
            {
                o.available = false;
            }
        }
    }
    Ok(c)
}

pub(super) fn write_types(
    file: &Path,
    region: &str,
    prices: &Prices,
    no_capacity: &[NoCapacity],
) -> Result<(), WorldError> {
    let text = catalog::instance_types(&catalog_now(region, prices, no_capacity)?).to_string();
    std::fs::write(file, text).map_err(|e| cluster_err(format!("{}: {e}", file.display())))
}

/// Applies every CRD in `dir` and waits until the API serves them.
pub(super) async fn install(client: &Client, dir: &Path) -> Result<(), WorldError> {
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .map_err(|e| {
            cluster_err(format!(
                "{}: {e} (run scripts/karpenter.sh build)",
                dir.display()
            ))
        })?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "yaml"))
        .collect();
    files.sort();
    for f in &files {
        let text = std::fs::read_to_string(f).map_err(|e| {
            cluster_err(KarpenterError::Crd {
                file: f.clone(),
                message: e.to_string(),
            })
        })?;
        wiring::apply(client, &text).await.map_err(|e| {
            cluster_err(KarpenterError::Crd {
                file: f.clone(),
                message: e.to_string(),
            })
        })?;
    }
    let start = std::time::Instant::now();
    loop {
        let served = kube::discovery::pinned_kind(
            client,
            &kube::api::GroupVersionKind::gvk(KWOK_GROUP, "v1alpha1", KWOK_CLASS),
        )
        .await
        .is_ok()
            && kube::discovery::pinned_kind(
                client,
                &kube::api::GroupVersionKind::gvk("karpenter.sh", "v1", "NodePool"),
            )
            .await
            .is_ok();
        if served {
            return Ok(());
        }
        if start.elapsed() > std::time::Duration::from_secs(60) {
            return Err(cluster_err("Karpenter's CRDs are not served after 60 s"));
        }
        tokio::time::sleep(std::time::Duration::from_millis(250)).await;
    }
}

/// A document as Karpenter's side takes it: an EC2NodeClass becomes the KWOKNodeClass of
/// the same name (its nodes registering `boot` after launch), and a NodePool references it.
pub(super) fn translate(mut doc: Value, boot: SignedDuration) -> Value {
    match doc["kind"].as_str() {
        Some("EC2NodeClass") => json!({"apiVersion": format!("{KWOK_GROUP}/v1alpha1"),
            "kind": KWOK_CLASS, "metadata": {"name": doc["metadata"]["name"]},
            "spec": {"nodeRegistrationDelay": format!("{}s", boot.as_secs())}}),
        Some("NodePool") => {
            let r = &mut doc["spec"]["template"]["spec"]["nodeClassRef"];
            if r.is_object() {
                r["group"] = json!(KWOK_GROUP);
                r["kind"] = json!(KWOK_CLASS);
            }
            doc
        }
        _ => doc,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn node_classes_are_played_by_kwok_node_classes() {
        let class = json!({"apiVersion": "karpenter.k8s.aws/v1", "kind": "EC2NodeClass",
            "metadata": {"name": "default"}, "spec": {"amiSelectorTerms": [{"alias": "al2023@latest"}]}});
        assert_eq!(
            translate(class, SignedDuration::from_secs(50)),
            json!({"apiVersion": "karpenter.kwok.sh/v1alpha1", "kind": "KWOKNodeClass",
                "metadata": {"name": "default"}, "spec": {"nodeRegistrationDelay": "50s"}})
        );
        let pool = json!({"apiVersion": "karpenter.sh/v1", "kind": "NodePool",
            "metadata": {"name": "p"}, "spec": {"template": {"spec": {"nodeClassRef":
            {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"}}}}});
        let out = translate(pool, SignedDuration::ZERO);
        assert_eq!(
            out["spec"]["template"]["spec"]["nodeClassRef"],
            json!({"group": "karpenter.kwok.sh", "kind": "KWOKNodeClass", "name": "default"})
        );
        let pod = json!({"kind": "Pod", "metadata": {"name": "x"}});
        assert_eq!(translate(pod.clone(), SignedDuration::ZERO), pod);
    }
}
