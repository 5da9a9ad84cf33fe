//! Turning a simulated new NodeClaim into a consolidation replacement, as Karpenter does:
//! only instance types whose worst launch price is below what the candidates cost stay, a
//! replacement that may be spot or on-demand becomes spot only, spot candidates are replaced
//! by spot only behind the spot-to-spot setting (and, for one node, only with at least 15
//! cheaper types, of which the 15 cheapest are offered), and `minValues` must still hold.

use std::collections::BTreeSet;

use kerf_catalog::InstanceType;
use kerf_labels::{CAPACITY_TYPE, CAPACITY_TYPE_SPOT, INSTANCE_TYPE, ZONE};

use super::candidates::Candidate;
use crate::model::NodePool;
use crate::plan::{Launch, SkipKind};
use crate::requirements::{Operator, SelectorRequirement};

/// Karpenter's `MinInstanceTypesForSpotToSpotConsolidation`.
pub const MIN_SPOT_TO_SPOT_TYPES: usize = 15;

/// The launch narrowed to what may replace `cands`, or why nothing may.
pub fn cheaper(
    mut launch: Launch,
    pool: &NodePool,
    cands: &[&Candidate<'_>],
    spot_to_spot: bool,
) -> Result<Launch, (SkipKind, String)> {
    let total: f64 = cands.iter().map(|c| c.price.unwrap_or(0.0)).sum();
    let all_spot = cands
        .iter()
        .all(|c| c.capacity_type() == Some(CAPACITY_TYPE_SPOT));
    let allowed_ct = values(&launch.requirements, CAPACITY_TYPE);
    let may_spot = allowed_ct
        .as_ref()
        .is_none_or(|v| v.contains(CAPACITY_TYPE_SPOT));
    if all_spot {
        if !spot_to_spot {
            return Err((
                SkipKind::NoCheaperOption,
                "its pods need a new node and replacing spot with spot is off \
                 (SpotToSpotConsolidation)"
                    .into(),
            ));
        }
        if !may_spot {
            return Err((
                SkipKind::NoCheaperOption,
                "a spot node is only replaced by a spot node".into(),
            ));
        }
    }
    // A replacement that may be spot is launched as spot: the price filter below counts
    // spot prices, and an on-demand fallback could cost more than the candidates.
    if may_spot {
        set_values(&mut launch.requirements, CAPACITY_TYPE, CAPACITY_TYPE_SPOT);
    }
    let zones = values(&launch.requirements, ZONE);
    let cts = values(&launch.requirements, CAPACITY_TYPE);
    let mut options: Vec<(&InstanceType, f64, f64)> = launch
        .instance_type_options
        .iter()
        .filter_map(|name| pool.catalog.instance_types.iter().find(|t| &t.name == name))
        .filter_map(|t| prices(t, zones.as_ref(), cts.as_ref()).map(|(lo, hi)| (t, lo, hi)))
        .filter(|(_, _, worst)| *worst < total - 1e-9)
        .filter(|(t, _, worst)| !same_type_no_cheaper(t, *worst, cands))
        .collect();
    options.sort_by(|a, b| a.1.total_cmp(&b.1).then(a.0.name.cmp(&b.0.name)));
    if options.is_empty() {
        return Err((
            SkipKind::NoCheaperOption,
            format!(
                "its pods fit elsewhere only on a new node costing as much or more than ${total:.4}/h"
            ),
        ));
    }
    if all_spot && cands.len() == 1 {
        if options.len() < MIN_SPOT_TO_SPOT_TYPES {
            return Err((
                SkipKind::NoCheaperOption,
                format!(
                    "only {} cheaper spot instance types; spot-to-spot needs {MIN_SPOT_TO_SPOT_TYPES}",
                    options.len()
                ),
            ));
        }
        let keep = MIN_SPOT_TO_SPOT_TYPES.max(min_values_needed(&launch.requirements));
        options.truncate(keep);
    }
    let types: Vec<&InstanceType> = options.iter().map(|o| o.0).collect();
    check_min_values(&launch.requirements, &types)?;
    let (best, ..) = options[0];
    let off = best
        .offerings
        .iter()
        .filter(|o| o.available && allowed(o.zone.as_str(), zones.as_ref()))
        .filter(|o| allowed(o.capacity_type.as_str(), cts.as_ref()))
        .min_by(|a, b| a.price.total_cmp(&b.price))
        .ok_or_else(|| (SkipKind::NoCheaperOption, "no offering left".to_string()))?;
    launch.instance_type = best.name.clone();
    launch.capacity_type = off.capacity_type;
    launch.zone = off.zone.clone();
    launch.price = off.price;
    launch.instance_type_options = types.iter().map(|t| t.name.clone()).collect();
    let names: Vec<String> = launch.instance_type_options.clone();
    set_list(&mut launch.requirements, INSTANCE_TYPE, names);
    Ok(launch)
}

/// Karpenter's `filterOutSameInstanceType`: a candidate's own type stays an option only when
/// it would cost less than that candidate does.
fn same_type_no_cheaper(t: &InstanceType, worst: f64, cands: &[&Candidate<'_>]) -> bool {
    cands.iter().any(|c| {
        c.instance_type() == Some(t.name.as_str()) && worst >= c.price.unwrap_or(0.0) - 1e-9
    })
}

/// The cheapest and the dearest available offering of `t` the requirements allow.
fn prices(
    t: &InstanceType,
    zones: Option<&BTreeSet<String>>,
    cts: Option<&BTreeSet<String>>,
) -> Option<(f64, f64)> {
    let ps: Vec<f64> = t
        .offerings
        .iter()
        .filter(|o| o.available && allowed(&o.zone, zones))
        .filter(|o| allowed(o.capacity_type.as_str(), cts))
        .map(|o| o.price)
        .collect();
    let lo = ps.iter().copied().reduce(f64::min)?;
    let hi = ps.iter().copied().reduce(f64::max)?;
    Some((lo, hi))
}

fn allowed(v: &str, set: Option<&BTreeSet<String>>) -> bool {
    set.is_none_or(|s| s.contains(v))
}

/// The values an `In` requirement on `key` allows (`None`: any).
fn values(reqs: &[SelectorRequirement], key: &str) -> Option<BTreeSet<String>> {
    reqs.iter()
        .find(|r| r.key == key && r.operator == Operator::In)
        .map(|r| r.values.iter().cloned().collect())
}

fn set_values(reqs: &mut Vec<SelectorRequirement>, key: &str, value: &str) {
    set_list(reqs, key, vec![value.to_string()]);
}

fn set_list(reqs: &mut Vec<SelectorRequirement>, key: &str, values: Vec<String>) {
    match reqs.iter_mut().find(|r| r.key == key) {
        Some(r) => {
            r.operator = Operator::In;
            r.values = values;
        }
        None => reqs.push(SelectorRequirement {
            key: key.to_string(),
            operator: Operator::In,
            values,
            min_values: None,
        }),
    }
}

fn min_values_needed(reqs: &[SelectorRequirement]) -> usize {
    reqs.iter()
        .filter_map(|r| r.min_values)
        .max()
        .map_or(0, |m| m as usize)
}

/// Every requirement's `minValues` still holds among the remaining types.
fn check_min_values(
    reqs: &[SelectorRequirement],
    types: &[&InstanceType],
) -> Result<(), (SkipKind, String)> {
    for r in reqs {
        let Some(m) = r.min_values else { continue };
        let distinct: BTreeSet<&str> = types
            .iter()
            .filter_map(|t| {
                if r.key == INSTANCE_TYPE {
                    Some(t.name.as_str())
                } else {
                    t.labels.get(&r.key).map(String::as_str)
                }
            })
            .collect();
        if distinct.len() < m as usize {
            return Err((
                SkipKind::NoCheaperOption,
                format!(
                    "the cheaper instance types offer {} values of {}, below its minValues {m}",
                    distinct.len(),
                    r.key
                ),
            ));
        }
    }
    Ok(())
}
