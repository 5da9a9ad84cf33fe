//! Finding the cluster's launch templates and deleting those no launch has used lately.

use jiff::Timestamp;

use super::{LaunchTemplateRef, NAME_PREFIX, to_ref};
use crate::error::{AwsError, from_sdk};

/// Kerf's templates of a cluster (tagged `kubernetes.io/cluster/<cluster>`, named with the prefix).
pub async fn list(
    ec2: &aws_sdk_ec2::Client,
    cluster: &str,
) -> Result<Vec<LaunchTemplateRef>, AwsError> {
    let filter = aws_sdk_ec2::types::Filter::builder()
        .name(format!("tag:{}", kerf_labels::aws::cluster_tag(cluster)))
        .values("owned")
        .build();
    let mut pages = ec2
        .describe_launch_templates()
        .filters(filter)
        .into_paginator()
        .send();
    let mut out = Vec::new();
    while let Some(page) = pages.next().await {
        let page = page.map_err(|e| from_sdk("DescribeLaunchTemplates", e))?;
        out.extend(page.launch_templates().iter().filter_map(to_ref));
    }
    out.retain(|lt| lt.name.starts_with(NAME_PREFIX));
    out.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(out)
}

/// Deletes the cluster's templates no launch has used since `unused_since`. Returns the
/// deleted names.
pub async fn delete_unused(
    ec2: &aws_sdk_ec2::Client,
    cluster: &str,
    unused_since: Timestamp,
) -> Result<Vec<String>, AwsError> {
    let mut deleted = Vec::new();
    for lt in list(ec2, cluster).await? {
        if lt.used_at().is_some_and(|t| t >= unused_since) {
            continue;
        }
        match ec2
            .delete_launch_template()
            .launch_template_id(&lt.id)
            .send()
            .await
        {
            Ok(_) => deleted.push(lt.name),
            Err(e) => match from_sdk("DeleteLaunchTemplate", e) {
                AwsError::NotFound(_) => deleted.push(lt.name),
                other => return Err(other),
            },
        }
    }
    Ok(deleted)
}
