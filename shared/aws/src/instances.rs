//! Instances: describe by id, list a cluster's instances by tag (for garbage collection), find
//! the instance of a NodeClaim, idempotent termination and instance status.

use aws_sdk_ec2::types::{Filter, Instance as Ec2Instance, InstanceLifecycleType};
use jiff::Timestamp;
use kerf_catalog::CapacityType;

use crate::error::{AwsError, from_sdk};
use crate::fleet::provider_id;

/// States of an instance that still counts (not terminated).
pub const LIVE_STATES: &[&str] = &["pending", "running", "stopping", "stopped", "shutting-down"];

/// An instance as the Cloud port describes it.
pub use kerf_control::ports::Instance;

/// Health as DescribeInstanceStatus reports it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InstanceStatus {
    pub id: String,
    pub state: String,
    pub instance_status: String,
    pub system_status: String,
    /// Scheduled event codes (`instance-retirement`, `system-reboot`, …).
    pub events: Vec<String>,
}

fn to_info(i: &Ec2Instance) -> Option<Instance> {
    let spot = i.instance_lifecycle() == Some(&InstanceLifecycleType::Spot);
    let id = i.instance_id()?.to_string();
    let reservation = i
        .capacity_reservation_id()
        .filter(|r| !r.is_empty())
        .map(str::to_string);
    let zone = i
        .placement()
        .and_then(|p| p.availability_zone())
        .unwrap_or_default()
        .to_string();
    Some(Instance {
        provider_id: provider_id(&zone, &id),
        id,
        instance_type: i
            .instance_type()
            .map(|t| t.as_str().to_string())
            .unwrap_or_default(),
        zone,
        state: i
            .state()
            .and_then(|s| s.name())
            .map(|n| n.as_str().to_string())
            .unwrap_or_default(),
        capacity_type: if spot {
            CapacityType::Spot
        } else if reservation.is_some() {
            CapacityType::Reserved
        } else {
            CapacityType::OnDemand
        },
        launch_time: i
            .launch_time()
            .and_then(|t| Timestamp::from_second(t.secs()).ok()),
        image_id: i.image_id().map(str::to_string),
        private_dns_name: i
            .private_dns_name()
            .filter(|d| !d.is_empty())
            .map(str::to_string),
        partition: i
            .placement()
            .and_then(|p| p.partition_number())
            .and_then(|n| u32::try_from(n).ok()),
        tags: i
            .tags()
            .iter()
            .filter_map(|t| {
                Some((
                    t.key()?.to_string(),
                    t.value().unwrap_or_default().to_string(),
                ))
            })
            .collect(),
        capacity_reservation: reservation,
        subnet_id: i.subnet_id().filter(|s| !s.is_empty()).map(str::to_string),
        security_group_ids: i
            .security_groups()
            .iter()
            .filter_map(|g| g.group_id().map(str::to_string))
            .collect(),
    })
}

fn filter(name: &str, values: &[&str]) -> Filter {
    Filter::builder()
        .name(name)
        .set_values(Some(values.iter().map(|v| v.to_string()).collect()))
        .build()
}

async fn describe_filtered(
    ec2: &aws_sdk_ec2::Client,
    filters: Vec<Filter>,
) -> Result<Vec<Instance>, AwsError> {
    let mut pages = ec2
        .describe_instances()
        .set_filters(Some(filters))
        .into_paginator()
        .send();
    let mut out = Vec::new();
    while let Some(page) = pages.next().await {
        let page = page.map_err(|e| from_sdk("DescribeInstances", e))?;
        for r in page.reservations() {
            out.extend(r.instances().iter().filter_map(to_info));
        }
    }
    out.sort_by(|a, b| a.id.cmp(&b.id));
    Ok(out)
}

/// Describes instances by id; unknown ids are simply absent (a filter, not `InstanceIds`).
pub async fn describe(
    ec2: &aws_sdk_ec2::Client,
    ids: &[String],
) -> Result<Vec<Instance>, AwsError> {
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    let ids: Vec<&str> = ids.iter().map(String::as_str).collect();
    describe_filtered(ec2, vec![filter("instance-id", &ids)]).await
}

/// The cluster's live Kerf/Karpenter instances (owned cluster tag + a nodepool tag).
pub async fn list_cluster(
    ec2: &aws_sdk_ec2::Client,
    cluster: &str,
) -> Result<Vec<Instance>, AwsError> {
    describe_filtered(
        ec2,
        vec![
            filter(
                &format!("tag:{}", kerf_labels::aws::cluster_tag(cluster)),
                &["owned"],
            ),
            filter("tag-key", &[kerf_labels::NODEPOOL]),
            filter("instance-state-name", LIVE_STATES),
        ],
    )
    .await
}

/// The pending or running instance launched for a NodeClaim, if any.
pub async fn find_by_nodeclaim(
    ec2: &aws_sdk_ec2::Client,
    cluster: &str,
    nodeclaim: &str,
) -> Result<Option<Instance>, AwsError> {
    let found = describe_filtered(
        ec2,
        vec![
            filter(
                &format!("tag:{}", kerf_labels::aws::cluster_tag(cluster)),
                &["owned"],
            ),
            filter(
                &format!("tag:{}", kerf_labels::aws::NODECLAIM_TAG),
                &[nodeclaim],
            ),
            filter("instance-state-name", &["pending", "running"]),
        ],
    )
    .await?;
    Ok(found.into_iter().next())
}

/// Terminates instances. Already terminated or unknown instances count as success.
pub async fn terminate(ec2: &aws_sdk_ec2::Client, ids: &[String]) -> Result<(), AwsError> {
    if ids.is_empty() {
        return Ok(());
    }
    match terminate_call(ec2, ids).await {
        Err(AwsError::NotFound(_)) if ids.len() > 1 => {
            for id in ids {
                match terminate_call(ec2, std::slice::from_ref(id)).await {
                    Ok(()) | Err(AwsError::NotFound(_)) => {}
                    Err(e) => return Err(e),
                }
            }
            Ok(())
        }
        Err(AwsError::NotFound(_)) => Ok(()),
        other => other,
    }
}

async fn terminate_call(ec2: &aws_sdk_ec2::Client, ids: &[String]) -> Result<(), AwsError> {
    ec2.terminate_instances()
        .set_instance_ids(Some(ids.to_vec()))
        .send()
        .await
        .map(|_| ())
        .map_err(|e| from_sdk("TerminateInstances", e))
}

/// Instance and system status checks plus scheduled events (all states included).
pub async fn status(
    ec2: &aws_sdk_ec2::Client,
    ids: &[String],
) -> Result<Vec<InstanceStatus>, AwsError> {
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    let ids: Vec<&str> = ids.iter().map(String::as_str).collect();
    let mut pages = ec2
        .describe_instance_status()
        .include_all_instances(true)
        .filters(filter("instance-id", &ids))
        .into_paginator()
        .send();
    let mut out = Vec::new();
    while let Some(page) = pages.next().await {
        let page = page.map_err(|e| from_sdk("DescribeInstanceStatus", e))?;
        for s in page.instance_statuses() {
            // The filter is authoritative on AWS; moto ignores it, so check again here.
            let Some(id) = s.instance_id().filter(|id| ids.contains(id)) else {
                continue;
            };
            let summary = |x: Option<&aws_sdk_ec2::types::InstanceStatusSummary>| {
                x.and_then(|x| x.status())
                    .map(|v| v.as_str().to_string())
                    .unwrap_or_default()
            };
            out.push(InstanceStatus {
                id: id.to_string(),
                state: s
                    .instance_state()
                    .and_then(|st| st.name())
                    .map(|n| n.as_str().to_string())
                    .unwrap_or_default(),
                instance_status: summary(s.instance_status()),
                system_status: summary(s.system_status()),
                events: s
                    .events()
                    .iter()
                    .filter_map(|e| e.code())
                    .map(|c| c.as_str().to_string())
                    .collect(),
            });
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use aws_sdk_ec2::types::{GroupIdentifier, Placement};

    #[test]
    fn an_instance_reports_its_subnet_security_groups_and_reservation() {
        let i = Ec2Instance::builder()
            .instance_id("i-1")
            .placement(Placement::builder().availability_zone("us-west-2a").build())
            .subnet_id("subnet-1")
            .security_groups(GroupIdentifier::builder().group_id("sg-1").build())
            .security_groups(GroupIdentifier::builder().group_id("sg-2").build())
            .capacity_reservation_id("cr-1")
            .build();
        let info = to_info(&i).unwrap();
        assert_eq!(info.subnet_id.as_deref(), Some("subnet-1"));
        assert_eq!(info.security_group_ids, ["sg-1", "sg-2"]);
        assert_eq!(info.capacity_reservation.as_deref(), Some("cr-1"));
        assert_eq!(info.capacity_type, CapacityType::Reserved);
        let bare = to_info(&Ec2Instance::builder().instance_id("i-2").build()).unwrap();
        assert_eq!((bare.subnet_id, bare.security_group_ids.len()), (None, 0));
        assert_eq!(bare.capacity_type, CapacityType::OnDemand);
    }
}
