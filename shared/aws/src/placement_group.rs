//! The node class's placement group (`spec.placementGroupSelector`), as Karpenter's AWS
//! provider resolves it: `DescribePlacementGroups` by id or name, `state=available`, the first
//! answer taken. An answer (a group, or none) is reused for [`PLACEMENT_GROUP_TTL`]; the last
//! group found is kept for [`LAST_GOOD_TTL`] and still used when a later call fails, the
//! failure being reported beside it.

use std::collections::BTreeMap;
use std::sync::Mutex;

use aws_sdk_ec2::types::{Filter, PlacementGroupState};
use jiff::{SignedDuration, Timestamp};
use kerf_api::v1::ec2nodeclass_types::PlacementGroupSelector;
use kerf_catalog::placement::{PlacementGroup, Strategy};

use crate::error::{AwsError, from_sdk};

/// How long an answer is reused (Karpenter's default cache TTL).
pub const PLACEMENT_GROUP_TTL: SignedDuration = SignedDuration::from_mins(1);
/// How long the last group found stands in for failed calls (Karpenter's
/// `PlacementGroupAvailabilityTTL`).
pub const LAST_GOOD_TTL: SignedDuration = SignedDuration::from_hours(24);

/// EC2's code for a group name it does not know.
const UNKNOWN_GROUP: &str = "InvalidPlacementGroup.Unknown";

/// What a selector selects: an id, else a name.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Query {
    Id(String),
    Name(String),
}

impl Query {
    /// The selector's query (`None` for a selector with neither field, which the CRD rejects).
    pub fn of(s: &PlacementGroupSelector) -> Option<Query> {
        match (&s.id, &s.name) {
            (Some(id), _) if !id.is_empty() => Some(Query::Id(id.clone())),
            (_, Some(name)) if !name.is_empty() => Some(Query::Name(name.clone())),
            _ => None,
        }
    }

    /// The id or name, as the condition message names it.
    pub fn text(&self) -> &str {
        match self {
            Query::Id(s) | Query::Name(s) => s,
        }
    }
}

/// How a node class's selector resolved.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Resolution {
    /// The class has no selector.
    NoSelector,
    Found(PlacementGroup),
    /// No available group matches.
    NotFound(Query),
    /// The call failed; the last group found, if one is still kept, stands in.
    Failed {
        query: Query,
        error: AwsError,
        last_good: Option<PlacementGroup>,
    },
}

impl Resolution {
    /// The group launches use: the one found, or the last good one after a failed call.
    pub fn group(&self) -> Option<&PlacementGroup> {
        match self {
            Resolution::Found(pg) => Some(pg),
            Resolution::Failed { last_good, .. } => last_good.as_ref(),
            Resolution::NoSelector | Resolution::NotFound(_) => None,
        }
    }
}

/// The group EC2 describes (`None` when it lacks an id or a known strategy).
pub fn from_sdk_group(pg: &aws_sdk_ec2::types::PlacementGroup) -> Option<PlacementGroup> {
    Some(PlacementGroup {
        id: pg.group_id()?.to_string(),
        name: pg.group_name().unwrap_or_default().to_string(),
        strategy: Strategy::parse(pg.strategy()?.as_str())?,
        partition_count: pg
            .partition_count()
            .and_then(|n| u32::try_from(n).ok())
            .unwrap_or(0),
    })
}

/// `DescribePlacementGroups` for `q` among available groups: the first match, or `None`.
pub async fn describe(
    ec2: &aws_sdk_ec2::Client,
    q: &Query,
) -> Result<Option<PlacementGroup>, AwsError> {
    let state = Filter::builder()
        .name("state")
        .values(PlacementGroupState::Available.as_str())
        .build();
    let req = ec2.describe_placement_groups().filters(state);
    let req = match q {
        Query::Id(id) => req.group_ids(id),
        Query::Name(name) => req.group_names(name),
    };
    match req.send().await {
        Ok(out) => Ok(out.placement_groups().first().and_then(from_sdk_group)),
        Err(e) => match from_sdk("DescribePlacementGroups", e) {
            e if is_unknown_group(&e) => Ok(None),
            e => Err(e),
        },
    }
}

/// EC2 answers an unknown id or name with an error rather than an empty list.
fn is_unknown_group(e: &AwsError) -> bool {
    match e {
        AwsError::NotFound(_) => true,
        AwsError::InvalidRequest(i) => i.code == UNKNOWN_GROUP,
        _ => false,
    }
}

type Answer = (Timestamp, Option<PlacementGroup>);

/// Resolutions cached for the life of a Lambda container.
#[derive(Debug, Default)]
pub struct PlacementGroups {
    answers: Mutex<BTreeMap<Query, Answer>>,
    last_good: Mutex<BTreeMap<Query, (Timestamp, PlacementGroup)>>,
}

impl PlacementGroups {
    pub fn new() -> Self {
        PlacementGroups::default()
    }

    /// Resolves `selector` at `now` (see the module documentation).
    pub async fn resolve(
        &self,
        ec2: &aws_sdk_ec2::Client,
        selector: Option<&PlacementGroupSelector>,
        now: Timestamp,
    ) -> Resolution {
        let Some(q) = selector.and_then(Query::of) else {
            return Resolution::NoSelector;
        };
        if let Some(answer) = self.fresh(&q, now) {
            return found(q, answer);
        }
        match describe(ec2, &q).await {
            Ok(answer) => {
                self.remember(&q, answer.clone(), now);
                found(q, answer)
            }
            Err(error) => Resolution::Failed {
                last_good: self.last_good(&q, now),
                query: q,
                error,
            },
        }
    }

    fn fresh(&self, q: &Query, now: Timestamp) -> Option<Option<PlacementGroup>> {
        let answers = self.answers.lock().unwrap_or_else(|p| p.into_inner());
        answers
            .get(q)
            .filter(|(at, _)| now < *at + PLACEMENT_GROUP_TTL)
            .map(|(_, a)| a.clone())
    }

    fn last_good(&self, q: &Query, now: Timestamp) -> Option<PlacementGroup> {
        let kept = self.last_good.lock().unwrap_or_else(|p| p.into_inner());
        kept.get(q)
            .filter(|(at, _)| now < *at + LAST_GOOD_TTL)
            .map(|(_, pg)| pg.clone())
    }

    fn remember(&self, q: &Query, answer: Option<PlacementGroup>, now: Timestamp) {
        if let Some(pg) = &answer {
            self.last_good
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .insert(q.clone(), (now, pg.clone()));
        }
        self.answers
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(q.clone(), (now, answer));
    }
}

fn found(q: Query, answer: Option<PlacementGroup>) -> Resolution {
    match answer {
        Some(pg) => Resolution::Found(pg),
        None => Resolution::NotFound(q),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use aws_sdk_ec2::types::PlacementStrategy;

    fn selector(id: Option<&str>, name: Option<&str>) -> PlacementGroupSelector {
        PlacementGroupSelector {
            id: id.map(str::to_string),
            name: name.map(str::to_string),
        }
    }

    #[test]
    fn an_id_selects_by_id_else_the_name() {
        let by_id = Query::of(&selector(Some("pg-0abc"), None));
        assert_eq!(by_id, Some(Query::Id("pg-0abc".into())));
        let by_name = Query::of(&selector(None, Some("kafka")));
        assert_eq!(by_name.as_ref().map(Query::text), Some("kafka"));
        assert_eq!(Query::of(&selector(None, None)), None);
    }

    #[test]
    fn ec2_groups_map_with_their_strategy_and_partitions() {
        let g = aws_sdk_ec2::types::PlacementGroup::builder()
            .group_id("pg-0abc")
            .group_name("kafka")
            .strategy(PlacementStrategy::Partition)
            .partition_count(3)
            .build();
        let pg = from_sdk_group(&g).expect("mapped");
        assert_eq!(pg.strategy, Strategy::Partition);
        assert_eq!(pg.partitions(), [1, 2, 3]);
        let no_id = aws_sdk_ec2::types::PlacementGroup::builder()
            .strategy(PlacementStrategy::Spread)
            .build();
        assert_eq!(from_sdk_group(&no_id), None);
    }

    #[test]
    fn a_failure_reports_the_last_good_group_beside_it() {
        let pg = PlacementGroup {
            id: "pg-0abc".into(),
            name: "kafka".into(),
            strategy: Strategy::Cluster,
            partition_count: 0,
        };
        let failed = Resolution::Failed {
            query: Query::Id("pg-0abc".into()),
            error: AwsError::invalid("DescribePlacementGroups", "x"),
            last_good: Some(pg.clone()),
        };
        assert_eq!(failed.group(), Some(&pg));
        assert_eq!(Resolution::NotFound(Query::Name("x".into())).group(), None);
        let cache = PlacementGroups::new();
        let t0: Timestamp = "2026-01-01T00:00:00Z".parse().unwrap();
        let q = Query::Id("pg-0abc".into());
        cache.remember(&q, Some(pg.clone()), t0);
        assert_eq!(cache.fresh(&q, t0 + PLACEMENT_GROUP_TTL), None, "stale");
        assert_eq!(cache.last_good(&q, t0 + LAST_GOOD_TTL / 2), Some(pg));
        assert_eq!(cache.last_good(&q, t0 + LAST_GOOD_TTL), None);
        cache.remember(&q, None, t0);
        assert_eq!(cache.fresh(&q, t0), Some(None));
    }
}
