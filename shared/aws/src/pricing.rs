//! Live prices: on-demand from the Pricing API (`GetProducts`, whose `PriceList` entries are
//! JSON documents in strings) and spot from `DescribeSpotPriceHistory` (latest per type and
//! zone). Either source falls back to the bundled table when AWS cannot answer.

use std::collections::BTreeMap;

use aws_sdk_pricing::types::{Filter as PricingFilter, FilterType};
use jiff::Timestamp;
use kerf_catalog::PriceSource;
use kerf_catalog::pricing::{estimate_spot, listed};
use serde_json::Value;

use crate::error::{AwsError, from_sdk};

/// Prices for the catalog builder.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Prices {
    pub on_demand: BTreeMap<String, f64>,
    /// `(type, zone) → price`. `None` until a spot refresh succeeded: then spot prices are
    /// estimated from on-demand; afterwards a missing entry means "no spot offering".
    pub spot: Option<BTreeMap<(String, String), f64>>,
    /// True when on-demand prices came from the bundled table.
    pub on_demand_fallback: bool,
}

impl PriceSource for Prices {
    fn on_demand(&self, instance_type: &str) -> Option<f64> {
        listed(&self.on_demand, instance_type)
    }

    fn spot(&self, instance_type: &str, zone: &str) -> Option<f64> {
        match &self.spot {
            Some(m) => m
                .get(&(instance_type.to_string(), zone.to_string()))
                .copied(),
            None => self
                .on_demand(instance_type)
                .map(|od| estimate_spot(od, instance_type, zone)),
        }
    }
}

/// Reads one `PriceList` entry: `(instanceType, USD per hour)`; `None` for non-instance or
/// zero-priced products.
pub fn parse_price_item(item: &str) -> Result<Option<(String, f64)>, serde_json::Error> {
    let v: Value = serde_json::from_str(item)?;
    let Some(itype) = v
        .pointer("/product/attributes/instanceType")
        .and_then(Value::as_str)
    else {
        return Ok(None);
    };
    let Some(terms) = v.pointer("/terms/OnDemand").and_then(Value::as_object) else {
        return Ok(None);
    };
    let price = terms
        .values()
        .filter_map(|t| t.get("priceDimensions").and_then(Value::as_object))
        .flat_map(|dims| dims.values())
        .filter_map(|d| d.get("pricePerUnit"))
        .filter_map(|p| {
            p.get("USD")
                .or_else(|| p.get("CNY"))
                .and_then(Value::as_str)
        })
        .filter_map(|s| s.parse::<f64>().ok())
        .find(|p| *p > 0.0);
    Ok(price.map(|p| (itype.to_string(), p)))
}

fn term(field: &str, value: &str) -> Result<PricingFilter, AwsError> {
    PricingFilter::builder()
        .r#type(FilterType::TermMatch)
        .field(field)
        .value(value)
        .build()
        .map_err(|e| AwsError::invalid("GetProducts", e.to_string()))
}

fn filters(region: &str, tenancy: &str, family: &str) -> Result<Vec<PricingFilter>, AwsError> {
    [
        ("regionCode", region),
        ("serviceCode", "AmazonEC2"),
        ("preInstalledSw", "NA"),
        ("operatingSystem", "Linux"),
        ("capacitystatus", "Used"),
        ("marketoption", "OnDemand"),
        ("tenancy", tenancy),
        ("productFamily", family),
    ]
    .into_iter()
    .map(|(f, v)| term(f, v))
    .collect()
}

async fn get_products(
    pricing: &aws_sdk_pricing::Client,
    filters: Vec<PricingFilter>,
    out: &mut BTreeMap<String, f64>,
) -> Result<usize, AwsError> {
    let mut pages = pricing
        .get_products()
        .service_code("AmazonEC2")
        .set_filters(Some(filters))
        .max_results(100)
        .into_paginator()
        .send();
    let mut n = 0;
    while let Some(page) = pages.next().await {
        let page = page.map_err(|e| from_sdk("GetProducts", e))?;
        for item in page.price_list() {
            let parsed = parse_price_item(item)
                .map_err(|e| AwsError::bad_response("GetProducts", e.to_string()))?;
            if let Some((t, p)) = parsed {
                out.insert(t, p);
                n += 1;
            }
        }
    }
    Ok(n)
}

/// On-demand Linux prices of `region` (shared tenancy, plus dedicated bare metal).
pub async fn on_demand_prices(
    pricing: &aws_sdk_pricing::Client,
    region: &str,
) -> Result<BTreeMap<String, f64>, AwsError> {
    let mut out = BTreeMap::new();
    let shared = get_products(
        pricing,
        filters(region, "Shared", "Compute Instance")?,
        &mut out,
    )
    .await?;
    let metal = filters(region, "Dedicated", "Compute Instance (bare metal)")?;
    get_products(pricing, metal, &mut out).await?;
    if shared == 0 {
        return Err(AwsError::bad_response(
            "GetProducts",
            "no on-demand prices returned",
        ));
    }
    Ok(out)
}

/// Latest Linux spot price per (type, zone); `types` restricts the query when non-empty.
pub async fn spot_prices(
    ec2: &aws_sdk_ec2::Client,
    types: &[String],
    now: Timestamp,
) -> Result<BTreeMap<(String, String), f64>, AwsError> {
    let mut pages = ec2
        .describe_spot_price_history()
        .product_descriptions("Linux/UNIX")
        .product_descriptions("Linux/UNIX (Amazon VPC)")
        .start_time(aws_sdk_ec2::primitives::DateTime::from_secs(
            now.as_second(),
        ))
        .set_instance_types(if types.is_empty() {
            None
        } else {
            Some(types.iter().map(|t| t.as_str().into()).collect())
        })
        .max_results(1000)
        .into_paginator()
        .send();
    let mut latest: BTreeMap<(String, String), (i64, f64)> = BTreeMap::new();
    while let Some(page) = pages.next().await {
        let page = page.map_err(|e| from_sdk("DescribeSpotPriceHistory", e))?;
        for p in page.spot_price_history() {
            let (Some(t), Some(z), Some(price)) =
                (p.instance_type(), p.availability_zone(), p.spot_price())
            else {
                continue;
            };
            let Ok(price) = price.parse::<f64>() else {
                continue;
            };
            let at = p.timestamp().map_or(0, |d| d.secs());
            let e = latest
                .entry((t.as_str().to_string(), z.to_string()))
                .or_insert((at, price));
            if at > e.0 {
                *e = (at, price);
            }
        }
    }
    Ok(latest.into_iter().map(|(k, (_, p))| (k, p)).collect())
}

/// Refreshes both price kinds, falling back to the bundled on-demand table (and the spot
/// estimate) for whatever AWS cannot answer, each fallback logged. Never fails.
pub async fn refresh(
    pricing: &aws_sdk_pricing::Client,
    ec2: &aws_sdk_ec2::Client,
    region: &str,
    types: &[String],
    now: Timestamp,
) -> Prices {
    let (prices, fallbacks) = refresh_saying(pricing, ec2, region, types, now).await;
    for f in &fallbacks {
        tracing::warn!(fallback = %f, "pricing unavailable");
    }
    prices
}

/// [`refresh`], returning what was filled in and why instead of logging it.
pub async fn refresh_saying(
    pricing: &aws_sdk_pricing::Client,
    ec2: &aws_sdk_ec2::Client,
    region: &str,
    types: &[String],
    now: Timestamp,
) -> (Prices, Vec<String>) {
    let (od, spot) = tokio::join!(
        on_demand_prices(pricing, region),
        spot_prices(ec2, types, now)
    );
    let mut said = Vec::new();
    let (on_demand, on_demand_fallback) = match od {
        Ok(m) => (m, false),
        Err(e) => {
            said.push(format!(
                "on-demand prices: {e}; using the bundled us-east-1 list prices"
            ));
            (bundled_on_demand(), true)
        }
    };
    let spot = match spot {
        Ok(m) if !m.is_empty() => Some(m),
        Ok(_) => {
            said.push("spot prices: none returned; estimated from on-demand".into());
            None
        }
        Err(e) => {
            said.push(format!("spot prices: {e}; estimated from on-demand"));
            None
        }
    };
    let prices = Prices {
        on_demand,
        spot,
        on_demand_fallback,
    };
    (prices, said)
}

/// The bundled on-demand table (empty if the bundled data cannot be read).
pub fn bundled_on_demand() -> BTreeMap<String, f64> {
    kerf_catalog::bundled::bundled_prices()
        .map(|p| p.on_demand.clone())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    const ITEM: &str = r#"{"product":{"productFamily":"Compute Instance","attributes":{"instanceType":"m5.large","regionCode":"us-west-2"},"sku":"X"},
      "terms":{"OnDemand":{"X.JRTCKXETXF":{"priceDimensions":{"X.JRTCKXETXF.6YS6EN2CT7":{"unit":"Hrs","pricePerUnit":{"USD":"0.0960000000"}}}}}}}"#;

    #[test]
    fn parses_a_price_list_item() {
        assert_eq!(
            parse_price_item(ITEM).unwrap(),
            Some(("m5.large".to_string(), 0.096))
        );
        let zero = ITEM.replace("0.0960000000", "0.0000000000");
        assert_eq!(parse_price_item(&zero).unwrap(), None);
        assert!(parse_price_item("{not json").is_err());
    }

    #[test]
    fn spot_estimate_until_refreshed() {
        let mut p = Prices {
            on_demand: BTreeMap::from([("m5.large".to_string(), 0.096)]),
            ..Default::default()
        };
        assert!(p.spot("m5.large", "us-west-2a").is_some());
        p.spot = Some(BTreeMap::new());
        assert_eq!(p.spot("m5.large", "us-west-2a"), None);
    }
}
