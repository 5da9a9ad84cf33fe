//! Prices cached for the life of a Lambda container. A complete refresh is kept for 12 hours
//! (Karpenter's interval); a partial one (a source fell back) is retried after 5 minutes.
//! A failed source never replaces good data from an earlier refresh.

use std::sync::Mutex;

use jiff::{SignedDuration, Timestamp};

use crate::pricing::{self, Prices};

/// How long a complete refresh is reused.
pub const PRICE_TTL: SignedDuration = SignedDuration::from_hours(12);
/// How soon a partial refresh is retried.
pub const RETRY_AFTER: SignedDuration = SignedDuration::from_mins(5);

/// A price cache for one region.
#[derive(Debug)]
pub struct PriceBook {
    region: String,
    /// Restrict spot queries to these types (empty = all).
    types: Vec<String>,
    cache: Mutex<Option<(Timestamp, Prices)>>,
}

impl PriceBook {
    pub fn new(region: &str, types: Vec<String>) -> Self {
        PriceBook {
            region: region.to_string(),
            types,
            cache: Mutex::new(None),
        }
    }

    /// The cached prices, whatever their age.
    pub fn last(&self) -> Option<Prices> {
        self.cached().map(|(_, p)| p)
    }

    fn cached(&self) -> Option<(Timestamp, Prices)> {
        self.cache.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// The current prices: cached until their expiry, else refreshed (never fails).
    pub async fn prices(
        &self,
        pricing_client: &aws_sdk_pricing::Client,
        ec2: &aws_sdk_ec2::Client,
        now: Timestamp,
    ) -> Prices {
        let old = self.cached();
        if let Some((until, p)) = &old
            && now < *until
        {
            return p.clone();
        }
        let fresh = pricing::refresh(pricing_client, ec2, &self.region, &self.types, now).await;
        let merged = merge(old.map(|(_, p)| p), fresh);
        let complete = !merged.on_demand_fallback && merged.spot.is_some();
        let until = now + if complete { PRICE_TTL } else { RETRY_AFTER };
        *self.cache.lock().unwrap_or_else(|p| p.into_inner()) = Some((until, merged.clone()));
        merged
    }
}

/// Keeps the earlier live data for any source that fell back this time.
pub fn merge(old: Option<Prices>, mut fresh: Prices) -> Prices {
    let Some(old) = old else { return fresh };
    if fresh.on_demand_fallback && !old.on_demand_fallback {
        fresh.on_demand = old.on_demand;
        fresh.on_demand_fallback = false;
    }
    if fresh.spot.is_none() {
        fresh.spot = old.spot;
    }
    fresh
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    #[test]
    fn a_failed_source_keeps_earlier_live_data() {
        let live = Prices {
            on_demand: BTreeMap::from([("m5.large".to_string(), 0.096)]),
            spot: Some(BTreeMap::new()),
            on_demand_fallback: false,
        };
        let failed = Prices {
            on_demand: BTreeMap::new(),
            spot: None,
            on_demand_fallback: true,
        };
        assert_eq!(merge(Some(live.clone()), failed), live);
    }
}
