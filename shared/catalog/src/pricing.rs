//! Prices: the [`PriceSource`] the builder asks, the bundled us-east-1 on-demand table, and a
//! deterministic spot price ESTIMATE.
//!
//! The spot estimate is NOT a market price. Until a live source (`DescribeSpotPriceHistory`)
//! replaces it, spot for (type, zone) = on-demand × a discount factor in
//! [`SPOT_FACTOR_MIN`, `SPOT_FACTOR_MAX`], chosen by the 64-bit FNV-1a hash of `"type/zone"`.
//! Same inputs, same price, on every machine and every run (never std's randomised hasher).
//! Like Karpenter's static fallback, regions other than us-east-1 reuse the us-east-1 table.

use std::collections::BTreeMap;

/// Answers price questions for the builder. Implemented by the bundled tables and, later,
/// by live AWS pricing.
pub trait PriceSource {
    /// USD per hour on demand, if known.
    fn on_demand(&self, instance_type: &str) -> Option<f64>;
    /// USD per hour on spot in `zone`, if known: the estimate from the on-demand price unless
    /// the source knows the market.
    fn spot(&self, instance_type: &str, zone: &str) -> Option<f64> {
        self.on_demand(instance_type)
            .map(|od| estimate_spot(od, instance_type, zone))
    }
}

/// The on-demand price of `instance_type` in a table, when it is a usable price (finite and
/// above zero).
pub fn listed(table: &BTreeMap<String, f64>, instance_type: &str) -> Option<f64> {
    table
        .get(instance_type)
        .copied()
        .filter(|p| p.is_finite() && *p > 0.0)
}

/// Lowest spot estimate, as a fraction of the on-demand price.
pub const SPOT_FACTOR_MIN: f64 = 0.25;
/// Highest spot estimate, as a fraction of the on-demand price.
pub const SPOT_FACTOR_MAX: f64 = 0.45;
/// Steps between the bounds (the hash picks one).
const SPOT_STEPS: u64 = 10_000;

const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
const FNV_PRIME: u64 = 0x0000_0100_0000_01b3;

/// 64-bit FNV-1a.
pub fn fnv1a64(bytes: &[u8]) -> u64 {
    fnv1a64_continue(FNV_OFFSET, bytes)
}

fn fnv1a64_continue(h: u64, bytes: &[u8]) -> u64 {
    bytes
        .iter()
        .fold(h, |h, b| (h ^ u64::from(*b)).wrapping_mul(FNV_PRIME))
}

/// The estimate's discount factor for (type, zone), in [`SPOT_FACTOR_MIN`, `SPOT_FACTOR_MAX`].
pub fn spot_factor(instance_type: &str, zone: &str) -> f64 {
    // FNV-1a of "type/zone", hashed in pieces to avoid building the string.
    let h = [instance_type.as_bytes(), b"/", zone.as_bytes()]
        .iter()
        .fold(FNV_OFFSET, |h, part| fnv1a64_continue(h, part));
    let step = (h % (SPOT_STEPS + 1)) as f64 / SPOT_STEPS as f64;
    SPOT_FACTOR_MIN + (SPOT_FACTOR_MAX - SPOT_FACTOR_MIN) * step
}

/// The spot ESTIMATE for (type, zone) from its on-demand price, rounded to 1e-6 USD.
pub fn estimate_spot(on_demand: f64, instance_type: &str, zone: &str) -> f64 {
    (on_demand * spot_factor(instance_type, zone) * 1e6).round() / 1e6
}

/// A static on-demand table plus the spot estimate.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StaticPrices {
    pub on_demand: BTreeMap<String, f64>,
}

impl StaticPrices {
    pub fn new(on_demand: BTreeMap<String, f64>) -> Self {
        StaticPrices { on_demand }
    }
}

impl PriceSource for StaticPrices {
    fn on_demand(&self, instance_type: &str) -> Option<f64> {
        listed(&self.on_demand, instance_type)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fnv1a_known_vectors() {
        assert_eq!(fnv1a64(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a64(b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(fnv1a64(b"foobar"), 0x8594_4171_f739_67e8);
    }

    #[test]
    fn factor_hashes_type_slash_zone() {
        let h = fnv1a64(b"m5.large/us-east-1a");
        let want = SPOT_FACTOR_MIN
            + (SPOT_FACTOR_MAX - SPOT_FACTOR_MIN)
                * ((h % (SPOT_STEPS + 1)) as f64 / SPOT_STEPS as f64);
        assert_eq!(spot_factor("m5.large", "us-east-1a"), want);
    }

    #[test]
    fn spot_estimate_is_deterministic_and_bounded() {
        let p = StaticPrices::new(BTreeMap::from([("m5.large".to_string(), 0.096)]));
        let a = p.spot("m5.large", "us-east-1a").unwrap();
        assert_eq!(Some(a), p.spot("m5.large", "us-east-1a"));
        for zone in ["us-east-1a", "us-east-1b", "us-west-2c", "eu-west-1a"] {
            let s = p.spot("m5.large", zone).unwrap();
            assert!(
                (0.096 * SPOT_FACTOR_MIN - 1e-6..=0.096 * SPOT_FACTOR_MAX + 1e-6).contains(&s),
                "{s}"
            );
        }
        assert_eq!(p.spot("nope.large", "us-east-1a"), None);
    }

    #[test]
    fn factors_vary_by_zone() {
        let f: Vec<f64> = ["a", "b", "c", "d"]
            .iter()
            .map(|z| spot_factor("c5.xlarge", z))
            .collect();
        assert!(f.windows(2).any(|w| w[0] != w[1]));
        assert!(
            f.iter()
                .all(|x| (SPOT_FACTOR_MIN..=SPOT_FACTOR_MAX).contains(x))
        );
    }
}
