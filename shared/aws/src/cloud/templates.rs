//! The launch templates of one launch: one per (AMI, max pods, EFA count, placement,
//! reservation) group
//! of the options, with the node's user data, and the options pointing at them.

use kerf_catalog::capacity::resource::EFA;
use kerf_catalog::placement::{PlacementGroup, Strategy};
use kerf_catalog::{Catalog, InstanceType};
use kerf_control::ports::cloud::NodeTaint;
use kerf_control::ports::{CloudError, LaunchRequest};

use super::arch_of;
use crate::cluster::Cluster;
use crate::fleet::LaunchOption;
use crate::launch_template::{
    Interfaces, LaunchTemplateSpec, Placement, PrimaryInterface, ReservationTarget,
};
use crate::nodeclass::Resolved;
use crate::userdata::{self, NodeBootstrap};

/// One launch template per (AMI, max pods, EFA count, placement, reservation) group of the
/// options, in option order. With the `ReservedCapacity` gate on (`gate`), templates say which
/// reservations their instances may use (see [`ReservationTarget`]).
pub(super) fn templates(
    cluster_name: &str,
    cluster: &Cluster,
    req: &LaunchRequest,
    resolved: &Resolved,
    catalog: &Catalog,
    group: Option<&PlacementGroup>,
    gate: bool,
) -> Result<(Vec<LaunchOption>, Vec<LaunchTemplateSpec>), CloudError> {
    let mut specs: Vec<LaunchTemplateSpec> = Vec::new();
    let mut options = Vec::new();
    let mut tags = req.node_class.spec.tags.clone();
    tags.insert(kerf_labels::aws::cluster_tag(cluster_name), "owned".into());
    tags.insert("eks:eks-cluster-name".into(), cluster_name.to_string());
    for o in &req.options {
        let Some(it) = catalog
            .instance_types
            .iter()
            .find(|t| t.name == o.instance_type)
        else {
            continue;
        };
        let arch = arch_of(
            it.labels
                .get(kerf_labels::ARCH)
                .map(String::as_str)
                .unwrap_or("amd64"),
        );
        let Some(ami) = resolved.amis.iter().find(|a| a.arch == arch) else {
            continue;
        };
        let max_pods = (it.capacity.get("pods") / 1000).max(0) as u32;
        let node = NodeBootstrap {
            labels: req.labels.clone(),
            taints: req.taints.iter().map(taint).collect(),
            max_pods: Some(max_pods),
            kubelet: resolved.kubelet.clone(),
            raid0: resolved.raid0,
        };
        let user_data = userdata::render(
            resolved.family,
            &cluster.info,
            &node,
            resolved.user_data.as_deref(),
        )
        .map_err(|e| CloudError::NodeClassNotReady(e.to_string()))?;
        let spec = LaunchTemplateSpec {
            image_id: ami.id.clone(),
            security_group_ids: resolved.security_groups.clone(),
            user_data,
            block_devices: resolved.block_devices.clone(),
            metadata: resolved.metadata.clone(),
            instance_profile: resolved.instance_profile.clone(),
            tags: tags.clone(),
            network: PrimaryInterface {
                ipv6: cluster.info.is_ipv6(),
                ..resolved.network.clone()
            },
            interfaces: interfaces(resolved, req, it),
            connection_tracking: resolved.connection_tracking,
            placement: placement(group, req),
            reservation: ReservationTarget::of(o.reservation.as_ref(), gate),
        };
        let name = spec.name();
        if !specs.iter().any(|s| s.name() == name) {
            specs.push(spec);
        }
        options.push(LaunchOption {
            instance_type: o.instance_type.clone(),
            zone: o.zone.clone(),
            price: o.price,
            launch_template: name,
            reservation: o.reservation.clone(),
        });
    }
    if options.is_empty() {
        return Err(CloudError::NodeClassNotReady(
            "no AMI for the architecture of any requested instance type".into(),
        ));
    }
    Ok((options, specs))
}

/// The class's interfaces, else, when the NodeClaim asks for EFA, the type's EFA interfaces
/// (as many as it advertises).
fn interfaces(resolved: &Resolved, req: &LaunchRequest, it: &InstanceType) -> Interfaces {
    if !resolved.interfaces.is_empty() {
        return Interfaces::Listed(resolved.interfaces.clone());
    }
    let efa = (it.capacity.get(EFA) / 1000).max(0);
    match u32::try_from(efa) {
        Ok(n) if req.efa_requested && n > 0 => Interfaces::Efa(n),
        _ => Interfaces::Primary,
    }
}

/// The placement of the class's group: in a partition group, the partition the request's
/// labels name (the lowest the NodeClaim allows), if any.
fn placement(group: Option<&PlacementGroup>, req: &LaunchRequest) -> Option<Placement> {
    let pg = group?;
    let partition = match pg.strategy {
        Strategy::Partition => req
            .labels
            .get(kerf_labels::aws::PLACEMENT_GROUP_PARTITION)
            .and_then(|p| p.parse().ok()),
        Strategy::Cluster | Strategy::Spread => None,
    };
    Some(Placement {
        group_id: pg.id.clone(),
        partition,
    })
}

fn taint(t: &NodeTaint) -> userdata::Taint {
    userdata::Taint {
        key: t.key.clone(),
        value: t.value.clone(),
        effect: t.effect.clone(),
    }
}
