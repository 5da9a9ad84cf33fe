//! `kerf catalog --from-aws`: the catalog of the user's own account and region, read with
//! their credentials through the same adapter the functions use (read-only calls only:
//! `ec2:DescribeInstanceTypes`, `ec2:DescribeInstanceTypeOfferings`,
//! `ec2:DescribeSpotPriceHistory`, `pricing:GetProducts`). The instance types and their zones
//! must come from AWS; prices that AWS does not give are filled in from the bundled table or
//! estimated, each said in a warning.

use jiff::Timestamp;
use kerf_aws::config::{AwsSettings, Clients};
use kerf_aws::discovery::{Inventory, build_catalog, instance_types, type_zones};
use kerf_aws::pricing::{Prices, bundled_on_demand, on_demand_prices, spot_prices};
use kerf_catalog::{Catalog, NodeClassSettings};

use crate::error::CliError;

/// A catalog read from AWS, and what the user should know about where its prices came from.
#[derive(Debug)]
pub struct Fetched {
    pub catalog: Catalog,
    pub warnings: Vec<String>,
}

/// The settings for `region` as a user's shell gives them: the default credential chain,
/// and `AWS_ENDPOINT_URL` when set (a local endpoint).
pub fn settings(region: &str) -> AwsSettings {
    let mut s = AwsSettings::new(region);
    if let Ok(url) = std::env::var("AWS_ENDPOINT_URL")
        && !url.is_empty()
    {
        s.endpoint_url = Some(url.clone());
        s.pricing_endpoint_url = Some(url);
    }
    s
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
    let mut warnings = Vec::new();
    let prices = prices(&clients, &aws.region, now, &mut warnings).await;
    let catalog = build_catalog(&aws.region, &inv, None, &prices, nodeclass)
        .map_err(|e| CliError::Internal(e.to_string()))?;
    Ok(Fetched { catalog, warnings })
}

/// On-demand prices from the Pricing API and spot prices from the spot price history; what
/// cannot be read is filled in and said.
async fn prices(
    clients: &Clients,
    region: &str,
    now: Timestamp,
    warnings: &mut Vec<String>,
) -> Prices {
    let (od, spot) = tokio::join!(
        on_demand_prices(&clients.pricing, region),
        spot_prices(&clients.ec2, &[], now)
    );
    let (on_demand, on_demand_fallback) = match od {
        Ok(m) => (m, false),
        Err(e) => {
            warnings.push(format!(
                "on-demand prices: {e}; using the bundled us-east-1 list prices"
            ));
            (bundled_on_demand(), true)
        }
    };
    let spot = match spot {
        Ok(m) if !m.is_empty() => Some(m),
        Ok(_) => {
            warnings.push(
                "spot prices: DescribeSpotPriceHistory returned none; estimated from on-demand"
                    .into(),
            );
            None
        }
        Err(e) => {
            warnings.push(format!("spot prices: {e}; estimated from on-demand"));
            None
        }
    };
    Prices {
        on_demand,
        spot,
        on_demand_fallback,
    }
}
