//! The node class's capacity reservations (`spec.capacityReservationSelectorTerms`), as
//! Karpenter's AWS provider discovers them: one `DescribeCapacityReservations` query per term
//! (by id, else by `owner-id`, tag and `instance-match-criteria` filters), always among
//! `active` reservations, paginated; the answers united and de-duplicated by id. A reservation
//! of a type or match criteria Kerf does not know is skipped with a warning, and one that has
//! ended is dropped. An answer is reused for [`RESERVATION_TTL`] per term set; the last one is
//! kept for [`LAST_GOOD_TTL`] and still used when a later call fails, the failure being
//! reported beside it.

use std::collections::BTreeMap;
use std::sync::Mutex;

use aws_sdk_ec2::types::{CapacityReservationState, Filter};
use jiff::{SignedDuration, Timestamp};
use kerf_api::v1::ec2nodeclass::CapacityReservationSelectorTerm;
use kerf_catalog::reservation::{MatchCriteria, Reservation, ReservationKind};

use crate::error::{AwsError, from_sdk};

/// How long an answer is reused (Karpenter's default cache TTL).
pub const RESERVATION_TTL: SignedDuration = SignedDuration::from_mins(1);
/// How long the last answer stands in for failed calls (Karpenter's
/// `CapacityReservationAvailabilityTTL`).
pub const LAST_GOOD_TTL: SignedDuration = SignedDuration::from_hours(24);

const OPERATION: &str = "DescribeCapacityReservations";
/// The most reservations one page may hold.
const PAGE_SIZE: i32 = 1000;

/// One query a selector term makes.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Query {
    /// `CapacityReservationIds` (EC2 takes no page size with ids).
    Id(String),
    /// Filters, all of which a reservation matches.
    Filters {
        owner_id: Option<String>,
        /// Tag key → value; `*` is any value (a `tag-key` filter).
        tags: BTreeMap<String, String>,
        match_criteria: Option<String>,
    },
}

impl Query {
    /// The queries of `terms`, sorted and distinct: a term's id is one, and its tags or match
    /// criteria (with its owner) another. A term with only an owner selects nothing, as in
    /// Karpenter.
    pub fn of_terms(terms: &[CapacityReservationSelectorTerm]) -> Vec<Query> {
        let mut out = Vec::new();
        for t in terms {
            if let Some(id) = t.id.as_ref().filter(|id| !id.is_empty()) {
                out.push(Query::Id(id.clone()));
            }
            let criteria = t.instance_match_criteria.clone().filter(|c| !c.is_empty());
            if !t.tags.is_empty() || criteria.is_some() {
                out.push(Query::Filters {
                    owner_id: t.owner_id.clone().filter(|o| !o.is_empty()),
                    tags: t.tags.clone(),
                    match_criteria: criteria,
                });
            }
        }
        out.sort();
        out.dedup();
        out
    }

    /// The request's filters: `state=active`, then the query's own.
    pub fn filters(&self) -> Vec<Filter> {
        let filter = |name: &str, value: &str| Filter::builder().name(name).values(value).build();
        let mut out = vec![filter("state", CapacityReservationState::Active.as_str())];
        if let Query::Filters {
            owner_id,
            tags,
            match_criteria,
        } = self
        {
            out.extend(owner_id.iter().map(|o| filter("owner-id", o)));
            out.extend(tags.iter().map(|(k, v)| match v.as_str() {
                "*" => filter("tag-key", k),
                v => filter(&format!("tag:{k}"), v),
            }));
            out.extend(
                match_criteria
                    .iter()
                    .map(|c| filter("instance-match-criteria", c)),
            );
        }
        out
    }
}

/// Why an EC2 reservation is not taken.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Unusable {
    #[error("capacity reservation {id} has unsupported reservation type {kind:?}")]
    UnknownKind { id: String, kind: String },
    #[error("capacity reservation {id} has unsupported instance match criteria {criteria:?}")]
    UnknownMatchCriteria { id: String, criteria: String },
    #[error("capacity reservation {id} lacks its {field}")]
    Missing { id: String, field: &'static str },
}

/// The reservation EC2 describes (no `ReservationType` is a default ODCR, as in Karpenter).
pub fn from_sdk_reservation(
    cr: &aws_sdk_ec2::types::CapacityReservation,
) -> Result<Reservation, Unusable> {
    let id = cr.capacity_reservation_id().unwrap_or_default().to_string();
    if id.is_empty() {
        return Err(Unusable::Missing { id, field: "id" });
    }
    let missing = |field| Unusable::Missing {
        id: id.clone(),
        field,
    };
    let criteria = cr
        .instance_match_criteria()
        .map(|c| c.as_str())
        .unwrap_or("");
    let match_criteria =
        MatchCriteria::parse(criteria).ok_or_else(|| Unusable::UnknownMatchCriteria {
            id: id.clone(),
            criteria: criteria.into(),
        })?;
    let kind = match cr.reservation_type().map(|k| k.as_str()) {
        None | Some("") => ReservationKind::Default,
        Some(k) => ReservationKind::parse(k).ok_or_else(|| Unusable::UnknownKind {
            id: id.clone(),
            kind: k.into(),
        })?,
    };
    Ok(Reservation {
        instance_type: cr
            .instance_type()
            .ok_or_else(|| missing("instance type"))?
            .into(),
        zone: cr
            .availability_zone()
            .ok_or_else(|| missing("zone"))?
            .into(),
        owner_id: cr.owner_id().unwrap_or_default().into(),
        match_criteria,
        kind,
        interruptible: cr.interruptible().unwrap_or(false),
        end_time: cr
            .end_date()
            .and_then(|t| Timestamp::new(t.secs(), t.subsec_nanos() as i32).ok()),
        available: u32::try_from(cr.available_instance_count().unwrap_or(0)).unwrap_or(0),
        id,
    })
}

/// `DescribeCapacityReservations` for one query, every page; an id EC2 does not know is no
/// reservation.
pub async fn describe(
    ec2: &aws_sdk_ec2::Client,
    q: &Query,
) -> Result<Vec<aws_sdk_ec2::types::CapacityReservation>, AwsError> {
    let req = ec2
        .describe_capacity_reservations()
        .set_filters(Some(q.filters()));
    let req = match q {
        Query::Id(id) => req.capacity_reservation_ids(id),
        Query::Filters { .. } => req.max_results(PAGE_SIZE),
    };
    let mut pages = req.into_paginator().send();
    let mut out = Vec::new();
    while let Some(page) = pages.next().await {
        match page.map_err(|e| from_sdk(OPERATION, e)) {
            Ok(page) => out.extend(page.capacity_reservations().iter().cloned()),
            Err(AwsError::NotFound(_)) if matches!(q, Query::Id(_)) => break,
            Err(e) => return Err(e),
        }
    }
    Ok(out)
}

/// The reservations of `queries` at `now`: united, de-duplicated by id, ordered by id, those
/// ended dropped and those unusable skipped with a warning.
pub async fn discover(
    ec2: &aws_sdk_ec2::Client,
    queries: &[Query],
    now: Timestamp,
) -> Result<Vec<Reservation>, AwsError> {
    let mut found = BTreeMap::new();
    for q in queries {
        for cr in describe(ec2, q).await? {
            match from_sdk_reservation(&cr) {
                Ok(r) => {
                    found.insert(r.id.clone(), r);
                }
                Err(e) => tracing::warn!(error = %e, "skipping capacity reservation"),
            }
        }
    }
    Ok(live(found.into_values(), now))
}

fn live(reservations: impl IntoIterator<Item = Reservation>, now: Timestamp) -> Vec<Reservation> {
    reservations
        .into_iter()
        .filter(|r| r.end_time.is_none_or(|end| end > now))
        .collect()
}

/// What a node class's terms resolved to.
#[derive(Clone, Debug, PartialEq)]
pub struct Resolution {
    /// The reservations found, or after a failed call the last ones found (if still kept).
    pub reservations: Vec<Reservation>,
    /// The failed call's error.
    pub error: Option<AwsError>,
}

impl Resolution {
    fn found(reservations: Vec<Reservation>) -> Self {
        Resolution {
            reservations,
            error: None,
        }
    }
}

/// An answer: when it was fetched, and the reservations.
type Answer = (Timestamp, Vec<Reservation>);

/// Answers cached for the life of a Lambda container, per term set.
#[derive(Debug, Default)]
pub struct CapacityReservations {
    answers: Mutex<BTreeMap<Vec<Query>, Answer>>,
}

impl CapacityReservations {
    pub fn new() -> Self {
        CapacityReservations::default()
    }

    /// Resolves `terms` at `now` (see the module documentation); no terms, no call.
    pub async fn resolve(
        &self,
        ec2: &aws_sdk_ec2::Client,
        terms: &[CapacityReservationSelectorTerm],
        now: Timestamp,
    ) -> Resolution {
        let queries = Query::of_terms(terms);
        if queries.is_empty() {
            return Resolution::found(Vec::new());
        }
        if let Some(r) = self.kept(&queries, now, RESERVATION_TTL) {
            return Resolution::found(r);
        }
        match discover(ec2, &queries, now).await {
            Ok(r) => {
                self.answers
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .insert(queries, (now, r.clone()));
                Resolution::found(r)
            }
            Err(error) => Resolution {
                reservations: self.kept(&queries, now, LAST_GOOD_TTL).unwrap_or_default(),
                error: Some(error),
            },
        }
    }

    /// The answer for `queries` if younger than `ttl`, without the reservations ended since.
    fn kept(
        &self,
        queries: &[Query],
        now: Timestamp,
        ttl: SignedDuration,
    ) -> Option<Vec<Reservation>> {
        let answers = self.answers.lock().unwrap_or_else(|p| p.into_inner());
        let (_, r) = answers.get(queries).filter(|(at, _)| now < *at + ttl)?;
        Some(live(r.iter().cloned(), now))
    }
}

#[cfg(test)]
#[path = "capacity_reservation_tests.rs"]
mod tests;
