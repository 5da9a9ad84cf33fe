//! A scenario step: one action, named or not.

use std::collections::BTreeMap;

use jiff::{SignedDuration, Timestamp};
use kerf_catalog::reservation::{MatchCriteria, ReservationKind};
use serde::Deserialize;

use super::{Expect, Source};
use crate::world::cloud::{DEFAULT_OWNER, ReservationSpec};

/// A namespaced object.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ObjectRef {
    /// `Deployment`, `NodePool`, `PodDisruptionBudget`, … (any kind the API server serves).
    pub kind: String,
    pub name: String,
    /// For namespaced kinds; `default` when omitted.
    pub namespace: Option<String>,
    /// Needed for kinds outside the core, apps, policy and Karpenter groups.
    pub api_version: Option<String>,
}

/// `kubectl scale deployment/<name> --replicas <n>`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Scale {
    pub deployment: String,
    pub replicas: u32,
    pub namespace: Option<String>,
}

/// Which nodes or offerings a step is about; every field given must match.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Select {
    pub instance_type: Option<String>,
    pub zone: Option<String>,
    /// `spot`, `on-demand` or `reserved`.
    pub capacity_type: Option<String>,
    pub node_pool: Option<String>,
    /// At most this many nodes (in name order).
    pub count: Option<usize>,
}

/// A new spot price.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct SpotPrice {
    pub instance_type: String,
    /// Every zone when omitted.
    pub zone: Option<String>,
    /// USD per hour.
    pub price: f64,
}

/// A capacity reservation EC2 holds from the step on.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Reserve {
    /// `cr-…`.
    pub id: String,
    pub instance_type: String,
    pub zone: String,
    /// Instances it holds room for.
    pub count: u32,
    /// `default` (an on-demand capacity reservation, the default) or `capacity-block`.
    pub kind: Option<ReservationKind>,
    /// `targeted` (default) or `open`.
    pub match_criteria: Option<MatchCriteria>,
    /// The owning account (default `123456789012`).
    #[serde(rename = "ownerID")]
    pub owner_id: Option<String>,
    #[serde(default)]
    pub tags: BTreeMap<String, String>,
    /// It ends this long after the step (`2h`); a capacity block needs it.
    pub ends_in: Option<String>,
    #[serde(default)]
    pub interruptible: bool,
}

impl Reserve {
    /// How long after the step it ends, if it does.
    fn ends_in(&self) -> Result<Option<SignedDuration>, String> {
        let d = self.ends_in.as_deref().map(super::duration).transpose()?;
        if self.kind == Some(ReservationKind::CapacityBlock) && d.is_none() {
            return Err(format!(
                "reserve {}: a capacity block needs `endsIn`",
                self.id
            ));
        }
        Ok(d)
    }

    /// The reservation, created at `now`.
    pub fn spec(&self, now: Timestamp) -> Result<ReservationSpec, String> {
        Ok(ReservationSpec {
            id: self.id.clone(),
            instance_type: self.instance_type.clone(),
            zone: self.zone.clone(),
            count: self.count,
            kind: self.kind.unwrap_or(ReservationKind::Default),
            match_criteria: self.match_criteria.unwrap_or(MatchCriteria::Targeted),
            owner_id: self
                .owner_id
                .clone()
                .unwrap_or_else(|| DEFAULT_OWNER.into()),
            tags: self.tags.clone(),
            end_time: self.ends_in()?.map(|d| now + d),
            interruptible: self.interruptible,
        })
    }
}

/// One step as written: exactly one action key, an optional name, and `within` for `until`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Step {
    pub name: Option<String>,
    /// Create or update objects (server-side apply).
    pub apply: Option<Source>,
    /// Delete one object.
    pub delete: Option<ObjectRef>,
    /// Set a Deployment's replicas.
    pub scale: Option<Scale>,
    /// Let simulated time pass (`90s`, `5m`, `1h`).
    pub advance: Option<String>,
    /// Let time pass until the expectation holds, at most `within`.
    pub until: Option<Expect>,
    /// How long `until` may take (default `10m`).
    pub within: Option<String>,
    /// Assert now.
    pub expect: Option<Expect>,
    /// A spot interruption warning for every matching node (EC2 takes it 2 minutes later).
    pub interrupt: Option<Select>,
    /// Matching offerings have no capacity from now on (launches fail with ICE).
    pub unavailable: Option<Select>,
    /// Matching offerings have capacity again.
    pub available: Option<Select>,
    /// A new AMI is published for the node classes' aliases (launched nodes drift).
    pub release_ami: Option<String>,
    /// A spot price moves.
    pub spot_price: Option<SpotPrice>,
    /// The kubelet of every matching node stops reporting (its Node turns `Ready=False`).
    pub fail_node: Option<Select>,
    /// EC2 holds a new capacity reservation.
    pub reserve: Option<Reserve>,
    /// A capacity reservation is cancelled (its instances keep running, as on-demand).
    pub cancel_reservation: Option<String>,
}

/// What a step does.
#[derive(Debug, Clone)]
pub enum Action<'a> {
    Apply(&'a Source),
    Delete(&'a ObjectRef),
    Scale(&'a Scale),
    Advance(jiff::SignedDuration),
    Until(&'a Expect, jiff::SignedDuration),
    Expect(&'a Expect),
    Interrupt(&'a Select),
    Unavailable(&'a Select),
    Available(&'a Select),
    ReleaseAmi(&'a str),
    SpotPrice(&'a SpotPrice),
    FailNode(&'a Select),
    Reserve(&'a Reserve),
    CancelReservation(&'a str),
}

impl Step {
    /// The step's one action, or what is wrong with it.
    pub fn action<'a>(&'a self) -> Result<Action<'a>, String> {
        let mut found: Vec<Action<'a>> = Vec::new();
        let mut keys: Vec<&str> = Vec::new();
        let mut add = |key: &'static str, a: Option<Action<'a>>| {
            if let Some(a) = a {
                keys.push(key);
                found.push(a);
            }
        };
        add("apply", self.apply.as_ref().map(Action::Apply));
        add("delete", self.delete.as_ref().map(Action::Delete));
        add("scale", self.scale.as_ref().map(Action::Scale));
        let advance = self.advance.as_deref().map(super::duration).transpose()?;
        add("advance", advance.map(Action::Advance));
        let within = match &self.within {
            Some(w) if self.until.is_none() => {
                return Err(format!("`within: {w}` belongs to an `until` step"));
            }
            Some(w) => super::duration(w)?,
            None => jiff::SignedDuration::from_mins(10),
        };
        add(
            "until",
            self.until.as_ref().map(|e| Action::Until(e, within)),
        );
        add("expect", self.expect.as_ref().map(Action::Expect));
        add("interrupt", self.interrupt.as_ref().map(Action::Interrupt));
        add(
            "unavailable",
            self.unavailable.as_ref().map(Action::Unavailable),
        );
        add("available", self.available.as_ref().map(Action::Available));
        add(
            "releaseAmi",
            self.release_ami.as_deref().map(Action::ReleaseAmi),
        );
        add("spotPrice", self.spot_price.as_ref().map(Action::SpotPrice));
        add("failNode", self.fail_node.as_ref().map(Action::FailNode));
        if let Some(r) = &self.reserve {
            r.ends_in()?;
        }
        add("reserve", self.reserve.as_ref().map(Action::Reserve));
        add(
            "cancelReservation",
            self.cancel_reservation
                .as_deref()
                .map(Action::CancelReservation),
        );
        if let Some(p) = &self.spot_price
            && !(p.price.is_finite() && p.price > 0.0)
        {
            return Err(format!(
                "spotPrice.price must be a positive number, not {}",
                p.price
            ));
        }
        match (found.pop(), keys.len()) {
            (Some(a), 1) => Ok(a),
            (None, _) => Err("no action: give one of apply, delete, scale, advance, until, expect, interrupt, unavailable, available, releaseAmi, spotPrice, failNode, reserve, cancelReservation".into()),
            _ => Err(format!("one action per step, found {}", keys.join(", "))),
        }
    }
}
