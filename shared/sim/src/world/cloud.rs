//! A simulated EC2: instances with ids, types, zones, tags and states; a boot delay; capacity
//! errors injectable per offering; ClientToken idempotency (one instance per NodeClaim UID);
//! failures injectable per call; call counts and the time of every launch call. Instance
//! types and prices come from the bundled catalog of the region, adjusted per EC2NodeClass.
//! Capacity reservations (on-demand ones and capacity blocks) hold room for instances of one
//! type in one zone ([`reservations`]); launches ([`launch`]) take it and terminations give
//! it back.

mod launch;
mod port;
mod reservations;

pub use reservations::{DEFAULT_OWNER, ReservationSpec};

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;

use jiff::{SignedDuration, Timestamp};
use kerf_api::v1::EC2NodeClass;
use kerf_catalog::unavailable::OfferingKey;
use kerf_catalog::{CapacityType, Catalog};
use kerf_control::ports::cloud::{NodeTaint, provider_id};
use kerf_control::ports::{
    Clock, CloudError, HealthCategory, Instance, LaunchOption, LaunchRequest, Launched, Unhealthy,
};

use super::kubelet::dns_name;

/// One simulated instance and what it was launched with.
#[derive(Debug, Clone)]
pub struct SimInstance {
    pub info: Instance,
    pub running_at: Timestamp,
    /// When EC2 takes the instance back (a spot interruption's two minutes run out).
    pub reclaim_at: Option<Timestamp>,
    /// When the capacity block it runs in ends: EC2 terminates it then.
    pub block_ends_at: Option<Timestamp>,
    /// Labels and taints the node registers with (the user data's kubelet flags).
    pub labels: BTreeMap<String, String>,
    pub taints: Vec<NodeTaint>,
    pub node_class: String,
    /// The instance type's labels, capacity and allocatable (what its kubelet reports).
    pub type_labels: BTreeMap<String, String>,
    pub capacity: BTreeMap<String, String>,
    pub allocatable: BTreeMap<String, String>,
    /// A fault its kubelet (or Node Monitoring Agent) reports: a Node condition held at a
    /// status, `Ready` `False` for a kubelet that stopped working.
    pub fault: Option<NodeFault>,
}

/// A Node condition a sick instance's Node reports (see [`SimCloud::fail_node`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeFault {
    pub condition: String,
    pub status: String,
}

/// A recorded launch call.
#[derive(Debug, Clone)]
pub struct FleetCall {
    /// Wall-clock time of the call (for latency measurements).
    pub at: Instant,
    pub node_claim: String,
    pub options: usize,
}

/// Offerings without capacity: each field `None` matches anything.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NoCapacity {
    pub capacity_type: Option<CapacityType>,
    pub instance_type: Option<String>,
    pub zone: Option<String>,
}

impl NoCapacity {
    fn matches(&self, k: &OfferingKey) -> bool {
        self.covers(k.capacity_type, &k.instance_type, &k.zone)
    }

    /// Whether this offering is one without capacity.
    pub fn covers(&self, capacity_type: CapacityType, instance_type: &str, zone: &str) -> bool {
        self.capacity_type.is_none_or(|c| c == capacity_type)
            && self
                .instance_type
                .as_deref()
                .is_none_or(|t| t == instance_type)
            && self.zone.as_deref().is_none_or(|z| z == zone)
    }
}

#[derive(Debug, Default)]
struct State {
    instances: BTreeMap<String, SimInstance>,
    tokens: BTreeMap<String, String>,
    next: u64,
    no_capacity: Vec<NoCapacity>,
    calls: BTreeMap<&'static str, usize>,
    fleet_calls: Vec<FleetCall>,
    faults: Vec<(&'static str, CloudError, usize)>,
    /// Random throttling and 5xx for every call.
    flaky: Option<crate::flaky::Flaky>,
    /// Calls failed by `flaky`.
    injected: usize,
    health: Vec<Unhealthy>,
    /// Wall-clock time calls of an operation take.
    latency: BTreeMap<&'static str, std::time::Duration>,
    /// The launch templates, by name, with their last use: one per EC2NodeClass and AMI.
    templates: BTreeMap<String, Timestamp>,
    /// The capacity reservations, by id.
    reservations: BTreeMap<String, reservations::Held>,
}

/// The simulated cloud; clones share it.
#[derive(Clone)]
pub struct SimCloud {
    region: String,
    clock: Arc<dyn Clock>,
    boot_delay: SignedDuration,
    state: Arc<Mutex<State>>,
    catalogs: Arc<Mutex<BTreeMap<String, Arc<Catalog>>>>,
    /// The AMI the node classes select now (an `-arm64` suffix for Graviton).
    ami: Arc<Mutex<String>>,
    /// Spot price overrides.
    pub prices: super::prices::Prices,
}

impl std::fmt::Debug for SimCloud {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SimCloud")
            .field("region", &self.region)
            .finish_non_exhaustive()
    }
}

impl SimCloud {
    /// A cloud in `region` whose instances boot in `boot_delay`.
    pub fn new(region: &str, clock: Arc<dyn Clock>, boot_delay: SignedDuration) -> Self {
        SimCloud {
            region: region.into(),
            clock,
            boot_delay,
            state: Arc::default(),
            catalogs: Arc::default(),
            ami: Arc::new(Mutex::new("ami-0a5e00000000000a1".into())),
            prices: Default::default(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn call(&self, op: &'static str) -> Result<(), CloudError> {
        let mut s = self.lock();
        *s.calls.entry(op).or_default() += 1;
        if let Some(k) = flaky_attempts(&mut s, op) {
            let why = format!("{op} (injected)");
            return Err(if k == 0 {
                CloudError::Throttled(why)
            } else {
                CloudError::Transient(why)
            });
        }
        let i = s.faults.iter().position(|(o, _, _)| *o == op);
        if let Some(i) = i {
            let err = s.faults[i].1.clone();
            s.faults[i].2 -= 1;
            if s.faults[i].2 == 0 {
                s.faults.remove(i);
            }
            return Err(err);
        }
        Ok(())
    }

    /// Makes the matching offerings fail for capacity until [`SimCloud::restore_capacity`].
    pub fn remove_capacity(&self, which: NoCapacity) {
        self.lock().no_capacity.push(which);
    }

    /// Makes `rate` of every later request fail at random (seeded), throttled or 5xx. As with
    /// the AWS SDK's standard retry mode that `kerf_aws` configures, a call is attempted up
    /// to [`SDK_ATTEMPTS`] times and fails only when every attempt does.
    pub fn set_flaky(&self, rate: f64, seed: u64) {
        self.lock().flaky = Some(crate::flaky::Flaky::new(rate, seed));
    }

    /// How many request attempts [`SimCloud::set_flaky`] has failed.
    pub fn injected_failures(&self) -> usize {
        self.lock().injected
    }

    /// Gives capacity back to the offerings an earlier [`SimCloud::remove_capacity`] with
    /// the same selector took away.
    pub fn restore_matching(&self, which: &NoCapacity) {
        self.lock().no_capacity.retain(|n| n != which);
    }

    /// Takes the instance back at `at`, as EC2 does two minutes after a spot interruption
    /// warning; unknown ids are ignored.
    pub fn reclaim(&self, instance_id: &str, at: Timestamp) {
        if let Some(i) = self.lock().instances.get_mut(instance_id) {
            i.reclaim_at = Some(at);
        }
    }

    /// Makes the instance sick: its Node reports `condition` at `status` from the kubelet's
    /// next step on, until the instance is gone (`None` heals it).
    pub fn fail_node(&self, instance_id: &str, fault: Option<NodeFault>) {
        if let Some(i) = self.lock().instances.get_mut(instance_id) {
            i.fault = fault;
        }
    }

    /// Sets the spot price of `instance_type` in `zone` (every zone when `None`); later
    /// catalogs carry it.
    pub fn set_spot_price(&self, instance_type: &str, zone: Option<&str>, price: f64) {
        self.prices.set_spot(instance_type, zone, price);
        self.catalogs
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clear();
    }

    /// Makes every later call of `op` (`CreateFleet`, `DescribeInstances`, …) take `d` of wall
    /// clock, as EC2's round trip would.
    pub fn set_latency(&self, op: &'static str, d: std::time::Duration) {
        self.lock().latency.insert(op, d);
    }

    /// Counts the call, waits its latency, then fails it if a fault is pending.
    async fn enter(&self, op: &'static str) -> Result<(), CloudError> {
        let d = self.lock().latency.get(op).copied();
        if let Some(d) = d {
            tokio::time::sleep(d).await;
        }
        self.call(op)
    }

    /// Reports `category` bad for the instance from `since` on (a failed status check, or a
    /// scheduled event), until [`SimCloud::recover`].
    pub fn impair(&self, instance_id: &str, category: HealthCategory, since: Timestamp) {
        let since = (category != HealthCategory::EventStatus).then_some(since);
        self.lock().health.push(Unhealthy {
            instance_id: instance_id.into(),
            category,
            since,
        });
    }

    /// Clears every bad health signal of the instance.
    pub fn recover(&self, instance_id: &str) {
        self.lock().health.retain(|u| u.instance_id != instance_id);
    }

    /// Gives every offering its capacity back.
    pub fn restore_capacity(&self) {
        self.lock().no_capacity.clear();
    }

    /// Publishes a new AMI: node classes select it from now on (launched nodes drift).
    pub fn release_ami(&self, id: &str) {
        *self.ami.lock().unwrap_or_else(|e| e.into_inner()) = id.to_string();
    }

    /// The AMI selected now for an architecture (`amd64` or `arm64`).
    pub fn ami(&self, arch: &str) -> String {
        let base = self.ami.lock().unwrap_or_else(|e| e.into_inner()).clone();
        if arch == "arm64" {
            format!("{base}-arm64")
        } else {
            base
        }
    }

    /// Fails the next `times` calls of `op` (`CreateFleet`, `DescribeInstances`,
    /// `TerminateInstances`, `DescribeInstanceTypes`) with `err`.
    pub fn fail(&self, op: &'static str, err: CloudError, times: usize) {
        self.lock().faults.push((op, err, times));
    }

    /// How many times `op` was called.
    pub fn calls(&self, op: &str) -> usize {
        self.lock().calls.get(op).copied().unwrap_or(0)
    }

    /// The launch templates the cloud holds now.
    pub fn templates(&self) -> Vec<String> {
        self.lock().templates.keys().cloned().collect()
    }

    /// Deletes the templates last used before `since`; returns their names.
    pub(super) fn delete_templates_unused_since(&self, since: Timestamp) -> Vec<String> {
        let mut s = self.lock();
        let old: Vec<String> = s
            .templates
            .iter()
            .filter(|(_, used)| **used < since)
            .map(|(name, _)| name.clone())
            .collect();
        for name in &old {
            s.templates.remove(name);
        }
        old
    }

    /// Every launch call so far.
    pub fn fleet_calls(&self) -> Vec<FleetCall> {
        self.lock().fleet_calls.clone()
    }

    /// When an instance next changes state by itself (boots or is taken back).
    pub fn next_change(&self) -> Option<Timestamp> {
        let now = self.clock.now();
        self.lock()
            .instances
            .values()
            .filter_map(|i| next_change(i, now))
            .min()
    }

    /// Every instance ever launched (terminated ones included), with its current state.
    pub fn instances(&self) -> Vec<SimInstance> {
        let now = self.clock.now();
        self.lock().instances.values().map(|i| at(i, now)).collect()
    }
}

/// Attempts per call under the AWS SDK's standard retry mode.
pub const SDK_ATTEMPTS: usize = 3;

/// The failure of a call whose every attempt failed, if so.
fn flaky_attempts(s: &mut State, op: &str) -> Option<usize> {
    let f = s.flaky.as_ref()?;
    let mut last = None;
    for _ in 0..SDK_ATTEMPTS {
        last = Some(f.pick(op, 2)?);
        s.injected += 1;
    }
    last
}

/// When `i` next changes state by itself after `now` (boots, is taken back, or its capacity
/// block ends).
pub(crate) fn next_change(i: &SimInstance, now: Timestamp) -> Option<Timestamp> {
    let boots = (i.info.state == "pending" && i.running_at > now).then_some(i.running_at);
    let reclaimed = [i.reclaim_at, i.block_ends_at]
        .into_iter()
        .flatten()
        .filter(|t| *t > now);
    boots.into_iter().chain(reclaimed).min()
}

fn at(i: &SimInstance, now: Timestamp) -> SimInstance {
    let mut i = i.clone();
    if i.info.state == "pending" && now >= i.running_at {
        i.info.state = "running".into();
    }
    let ended = |t: Option<Timestamp>| t.is_some_and(|t| now >= t);
    if ended(i.reclaim_at) || ended(i.block_ends_at) {
        i.info.state = "terminated".into();
    }
    i
}
