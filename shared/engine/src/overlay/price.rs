//! A NodeOverlay's price: `price` sets it, `priceAdjustment` moves it by an amount
//! (`"+5.00"`, `"-7.50"`) or a percentage (`"-10%"`, `"+15%"`); the result is never below 0.

/// How an overlay changes an offering's price.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum PriceChange {
    /// `price`: the offering costs this.
    Set(f64),
    /// `priceAdjustment` `±N`: this much more (or less).
    Add(f64),
    /// `priceAdjustment` `±N%`: this percentage more (or less).
    Percent(f64),
}

/// Why a NodeOverlay's price fields are unusable.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OverlayError {
    #[error("price {0:?} is not a non-negative decimal number")]
    Price(String),
    #[error(
        "priceAdjustment {0:?} is not a signed amount (\"+5.00\", \"-7.50\") or percentage (\"-10%\")"
    )]
    Adjustment(String),
    #[error("price and priceAdjustment are mutually exclusive")]
    Both,
}

impl PriceChange {
    /// The overlaid price of an offering that costs `base`.
    pub fn apply(self, base: f64) -> f64 {
        let p = match self {
            PriceChange::Set(p) => p,
            PriceChange::Add(d) => base + d,
            PriceChange::Percent(pct) => base * (1.0 + pct / 100.0),
        };
        p.max(0.0)
    }

    /// `spec.price` and `spec.priceAdjustment` (at most one of them).
    pub fn parse(
        price: Option<&str>,
        adjustment: Option<&str>,
    ) -> Result<Option<PriceChange>, OverlayError> {
        match (price, adjustment) {
            (Some(_), Some(_)) => Err(OverlayError::Both),
            (Some(p), None) => decimal(p)
                .map(|v| Some(PriceChange::Set(v)))
                .ok_or_else(|| OverlayError::Price(p.into())),
            (None, Some(a)) => adjustment_of(a)
                .map(Some)
                .ok_or_else(|| OverlayError::Adjustment(a.into())),
            (None, None) => Ok(None),
        }
    }
}

/// Digits with at most one `.`, as a number.
fn decimal(s: &str) -> Option<f64> {
    let ok = !s.is_empty()
        && s.chars().all(|c| c.is_ascii_digit() || c == '.')
        && s.chars().filter(|&c| c == '.').count() <= 1
        && s.chars().any(|c| c.is_ascii_digit());
    if ok { s.parse().ok() } else { None }
}

fn adjustment_of(a: &str) -> Option<PriceChange> {
    let (sign, rest) = match a.as_bytes().first()? {
        b'+' => (1.0, &a[1..]),
        b'-' => (-1.0, &a[1..]),
        _ => (1.0, a),
    };
    match rest.strip_suffix('%') {
        Some(pct) => decimal(pct).map(|v| PriceChange::Percent(sign * v)),
        None => decimal(rest).map(|v| PriceChange::Add(sign * v)),
    }
}
