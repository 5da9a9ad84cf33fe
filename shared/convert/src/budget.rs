//! Kerf's dollar limit on a NodePool: the `kerf.dev/max-cost-per-hour` annotation, read and
//! checked here so `kerf plan` and the control layer refuse the same bad values.

use kerf_api::v1::NodePool;
use kerf_labels::MAX_COST_PER_HOUR;

use crate::FieldError;

/// The NodePool's hourly dollar limit, `None` without the annotation. A value that is not a
/// finite, non-negative decimal number of dollars is an error naming the NodePool, the
/// annotation and what is wrong.
pub fn max_cost_per_hour(np: &NodePool) -> Result<Option<f64>, FieldError> {
    let Some(raw) = np
        .metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(MAX_COST_PER_HOUR))
    else {
        return Ok(None);
    };
    parse(raw).map(Some).map_err(|why| {
        let name = np.metadata.name.as_deref().unwrap_or_default();
        FieldError::new(
            format!("metadata.annotations[{MAX_COST_PER_HOUR}]"),
            format!("NodePool {name:?}: {MAX_COST_PER_HOUR} {raw:?} {why}"),
        )
    })
}

/// Why a dollar amount is not usable.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum BadAmount {
    #[error("is not a number of US dollars per hour (write it like \"25.00\")")]
    NotANumber,
    #[error("is negative; the limit is the most a NodePool may cost per hour")]
    Negative,
}

/// Parses a plain decimal dollar amount (`25`, `25.00`, `0.5`; no sign, unit or exponent).
pub fn parse(raw: &str) -> Result<f64, BadAmount> {
    let t = raw.trim();
    if let Some(rest) = t.strip_prefix('-')
        && plain_decimal(rest)
    {
        return Err(BadAmount::Negative);
    }
    if !plain_decimal(t) {
        return Err(BadAmount::NotANumber);
    }
    t.parse::<f64>().map_err(|_| BadAmount::NotANumber)
}

/// Digits with at most one decimal point and at least one digit.
fn plain_decimal(t: &str) -> bool {
    let mut dots = 0;
    let mut digits = 0;
    for ch in t.chars() {
        match ch {
            '0'..='9' => digits += 1,
            '.' => dots += 1,
            _ => return false,
        }
    }
    digits > 0 && dots <= 1
}

#[cfg(test)]
#[path = "budget_tests.rs"]
mod tests;
