//! `kerf catalog --from-aws`: the catalog of the user's own account and region, read with
//! their credentials through the same adapter the functions use (read-only calls only:
//! `ec2:DescribeInstanceTypes`, `ec2:DescribeInstanceTypeOfferings`,
//! `ec2:DescribeSpotPriceHistory`, `pricing:GetProducts`). The instance types and their zones
//! must come from AWS; prices that AWS does not give are filled in from the bundled table or
//! estimated, each said in a warning.

use jiff::Timestamp;
use kerf_aws::config::{AwsSettings, Clients};
use kerf_aws::discovery::{Inventory, build_catalog, instance_types, type_zones};
use kerf_aws::pricing::refresh_saying;
use kerf_catalog::{Catalog, NodeClassSettings};

use crate::error::CliError;

/// A catalog read from AWS, and what the user should know about where its prices came from.
#[derive(Debug)]
pub struct Fetched {
    pub catalog: Catalog,
    pub warnings: Vec<String>,
}

fn aws_error(what: &str, e: impl std::fmt::Display) -> CliError {
    CliError::Aws(format!("{what}: {e}"))
}

/// Reads the region's instance types, their zones and prices, and builds the catalog under
/// `nodeclass`'s settings.
pub async fn fetch(
    aws: &AwsSettings,
    nodeclass: &NodeClassSettings,
    now: Timestamp,
) -> Result<Fetched, CliError> {
    let clients = Clients::load(aws).await;
    let (specs, zones) = tokio::try_join!(
        instance_types(&clients.ec2, &[]),
        type_zones(&clients.ec2, &[])
    )
    .map_err(|e| aws_error("reading the instance types", e))?;
    if specs.is_empty() {
        return Err(CliError::Aws(format!(
            "DescribeInstanceTypes returned no instance type in {}",
            aws.region
        )));
    }
    let inv = Inventory { specs, zones };
    let (prices, warnings) =
        refresh_saying(&clients.pricing, &clients.ec2, &aws.region, &[], now).await;
    let catalog = build_catalog(&aws.region, &inv, None, &prices, nodeclass)
        .map_err(|e| CliError::Internal(e.to_string()))?;
    Ok(Fetched { catalog, warnings })
}
