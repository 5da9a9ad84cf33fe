//! `minValues`: how many distinct values of a key a claim's instance-type options must
//! span, checked while packing, after truncating options, and relaxed under `BestEffort`.

use crate::pools::{PoolCtx, TypeCtx};
use crate::requirements::Requirements;
use crate::res::Res;

/// A requirement whose `minValues` the instance types left do not reach.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("minValues requirement is not met for {key} ({have} of {min})")]
pub struct MinValuesError {
    /// The requirement's key.
    pub key: String,
    /// How many distinct values the types span.
    pub have: u32,
    /// The `minValues` it asks for.
    pub min: u32,
}

/// minValues: enough distinct values of each key must remain among the types that fit.
pub fn check_min_values(
    pool: &PoolCtx<'_>,
    reqs: &Requirements,
    used: &Res,
) -> Result<(), MinValuesError> {
    let fitting: Vec<&TypeCtx<'_>> = pool
        .types
        .iter()
        .filter(|t| {
            t.matches(reqs) && t.cheapest(reqs).is_some() && t.alloc.fits(&used.plus(&t.ds))
        })
        .collect();
    min_values_satisfied(reqs, &fitting)
}

/// minValues for a claim that must still be able to use type `t`.
pub fn check_min_values_for(pool: &PoolCtx<'_>, t: usize, reqs: &Requirements, used: &Res) -> bool {
    pool.types[t].alloc.fits(&used.plus(&pool.types[t].ds))
        && check_min_values(pool, reqs, used).is_ok()
}

/// The number of distinct values `types` have for `key`.
fn distinct(types: &[&TypeCtx<'_>], key: &str) -> u32 {
    let mut vals: Vec<&str> = types.iter().filter_map(|t| t.label(key)).collect();
    vals.sort_unstable();
    vals.dedup();
    vals.len() as u32
}

/// Ok when `types` span at least `minValues` distinct values for every key that sets one.
pub fn min_values_satisfied(
    reqs: &Requirements,
    types: &[&TypeCtx<'_>],
) -> Result<(), MinValuesError> {
    for (key, r) in reqs.iter() {
        let Some(min) = r.min_values else { continue };
        let have = distinct(types, key);
        if have < min {
            return Err(MinValuesError {
                key: key.clone(),
                have,
                min,
            });
        }
    }
    Ok(())
}

/// `MIN_VALUES_POLICY=BestEffort`: lowers every `minValues` the options do not reach to the
/// number of distinct values they have (dropped when they have none); true when one was.
pub fn relax_min_values(reqs: &mut Requirements, types: &[&TypeCtx<'_>]) -> bool {
    let short: Vec<(String, u32)> = reqs
        .iter()
        .filter_map(|(key, r)| {
            let min = r.min_values?;
            let have = distinct(types, key);
            (have < min).then(|| (key.clone(), have))
        })
        .collect();
    for (key, have) in &short {
        if let Some(mut r) = reqs.remove(key) {
            r.min_values = (*have > 0).then_some(*have);
            reqs.add(key, r);
        }
    }
    !short.is_empty()
}
