//! What a pod asks of a node: effective resource requests (as kube-scheduler sums them) and
//! node requirements, with Karpenter's preference relaxation ladder.

use kerf_catalog::Resources;

use crate::model::{AffinityTerm, PodSpec, TopologySpread, WhenUnsatisfiable};
use crate::requirements::{Requirement, RequirementError, Requirements};

/// One container's resources.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ContainerResources {
    pub requests: Resources,
    pub limits: Resources,
    /// An init container with `restartPolicy: Always` (a sidecar).
    pub sidecar: bool,
}

impl ContainerResources {
    /// Requests, defaulting each missing request to its limit (API server defaulting).
    fn effective(&self) -> Resources {
        let mut r = self.requests.clone();
        for (k, v) in &self.limits.0 {
            r.0.entry(k.clone()).or_insert(*v);
        }
        r
    }
}

/// kube-scheduler's pod requests: containers plus sidecars, at least every init container
/// step, plus pod overhead, plus `pods: 1`.
pub fn effective_requests(
    containers: &[ContainerResources],
    init_containers: &[ContainerResources],
    overhead: &Resources,
) -> Resources {
    effective_pod_requests(containers, init_containers, None, overhead)
}

/// True for the resources Kubernetes lets a pod set at pod level (`spec.resources`, the
/// PodLevelResources feature): cpu, memory and huge pages.
pub fn is_pod_level_resource(name: &str) -> bool {
    name == "cpu" || name == "memory" || name.starts_with("hugepages-")
}

/// [`effective_requests`] for a pod that may set resources at pod level (`spec.resources`):
/// each pod-level request (a pod-level limit without a request defaults it, as the API server
/// defaults them) replaces what the containers sum to for that resource, as kube-scheduler's
/// `PodRequests` does; the other resources keep the container rule. Overhead and `pods: 1`
/// are added either way.
pub fn effective_pod_requests(
    containers: &[ContainerResources],
    init_containers: &[ContainerResources],
    pod_level: Option<&ContainerResources>,
    overhead: &Resources,
) -> Resources {
    let mut reqs = container_requests(containers, init_containers);
    if let Some(pod) = pod_level {
        for (k, v) in &pod.effective().0 {
            if is_pod_level_resource(k) {
                reqs.set(k, *v);
            }
        }
    }
    reqs.add(overhead);
    reqs.set("pods", reqs.get("pods") + 1000);
    reqs
}

/// Containers plus sidecars, at least every init container step.
fn container_requests(
    containers: &[ContainerResources],
    init_containers: &[ContainerResources],
) -> Resources {
    let mut reqs = Resources::new();
    for c in containers {
        reqs.add(&c.effective());
    }
    let mut sidecars = Resources::new();
    let mut init_max = Resources::new();
    for c in init_containers {
        let step = if c.sidecar {
            sidecars.add(&c.effective());
            sidecars.clone()
        } else {
            let mut s = c.effective();
            s.add(&sidecars);
            s
        };
        max_into(&mut init_max, &step);
    }
    reqs.add(&sidecars);
    max_into(&mut reqs, &init_max);
    reqs
}

fn max_into(acc: &mut Resources, other: &Resources) {
    for (k, v) in &other.0 {
        let e = acc.0.entry(k.clone()).or_insert(0);
        *e = (*e).max(*v);
    }
}

/// How far a pod's preferences have been relaxed (Karpenter's `preferences.go` order).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Relaxation {
    pub dropped_required_terms: usize,
    pub dropped_pref_affinity: usize,
    pub dropped_pref_anti: usize,
    pub dropped_pref_node: usize,
    pub dropped_schedule_anyway: usize,
    pub tolerate_prefer_no_schedule: bool,
}

impl Relaxation {
    /// Takes the next relaxation step; false when nothing is left to relax.
    pub fn relax(&mut self, spec: &PodSpec, respect: bool, pools_prefer_taints: bool) -> bool {
        if self.dropped_required_terms + 1 < spec.required_terms.len() {
            self.dropped_required_terms += 1;
        } else if respect && self.dropped_pref_affinity < spec.preferred_affinity.len() {
            self.dropped_pref_affinity += 1;
        } else if respect && self.dropped_pref_anti < spec.preferred_anti_affinity.len() {
            self.dropped_pref_anti += 1;
        } else if respect && self.dropped_pref_node < spec.preferred_terms.len() {
            self.dropped_pref_node += 1;
        } else if respect && self.dropped_schedule_anyway < schedule_anyway(spec).count() {
            self.dropped_schedule_anyway += 1;
        } else if pools_prefer_taints && !self.tolerate_prefer_no_schedule {
            self.tolerate_prefer_no_schedule = true;
        } else {
            return false;
        }
        true
    }
}

fn schedule_anyway(spec: &PodSpec) -> impl Iterator<Item = &TopologySpread> {
    spec.spread
        .iter()
        .filter(|s| s.when_unsatisfiable == WhenUnsatisfiable::ScheduleAnyway)
}

/// Sorts weighted items heaviest first, keeping declaration order among equals.
fn by_weight<T>(items: &[crate::model::WeightedTerm<T>]) -> Vec<&T> {
    let mut v: Vec<(usize, &crate::model::WeightedTerm<T>)> = items.iter().enumerate().collect();
    v.sort_by(|(ia, a), (ib, b)| b.weight.cmp(&a.weight).then(ia.cmp(ib)));
    v.into_iter().map(|(_, w)| &w.term).collect()
}

/// Node requirements: `nodeSelector`, the current required term, and (when respecting
/// preferences) the heaviest remaining preferred term.
pub fn node_requirements(
    spec: &PodSpec,
    relax: &Relaxation,
    respect: bool,
) -> Result<Requirements, RequirementError> {
    let mut r = strict_requirements(spec, relax)?;
    if respect && let Some(term) = by_weight(&spec.preferred_terms).get(relax.dropped_pref_node) {
        r.add_all(&Requirements::from_selectors(term)?);
    }
    Ok(r)
}

/// Requirements without preferences (used for topology domain eligibility).
pub fn strict_requirements(
    spec: &PodSpec,
    relax: &Relaxation,
) -> Result<Requirements, RequirementError> {
    let mut r = Requirements::new();
    for (k, v) in &spec.node_selector {
        r.add(crate::labels::normalize(k), Requirement::is_in([v.clone()]));
    }
    if let Some(term) = spec.required_terms.get(relax.dropped_required_terms) {
        r.add_all(&Requirements::from_selectors(term)?);
    }
    Ok(r)
}

/// The pod-level constraints in force at this relaxation level.
#[derive(Clone, Debug, Default)]
pub struct ActiveConstraints<'a> {
    pub spread: Vec<&'a TopologySpread>,
    pub affinity: Vec<&'a AffinityTerm>,
    pub anti_affinity: Vec<&'a AffinityTerm>,
}

/// Constraints still active: required ones always, preferred ones while respected and not
/// yet relaxed away (heaviest are relaxed first).
pub fn active_constraints<'a>(
    spec: &'a PodSpec,
    relax: &Relaxation,
    respect: bool,
) -> ActiveConstraints<'a> {
    let mut c = ActiveConstraints {
        spread: spec
            .spread
            .iter()
            .filter(|s| s.when_unsatisfiable == WhenUnsatisfiable::DoNotSchedule)
            .collect(),
        affinity: spec.affinity.iter().collect(),
        anti_affinity: spec.anti_affinity.iter().collect(),
    };
    if respect {
        c.spread
            .extend(schedule_anyway(spec).skip(relax.dropped_schedule_anyway));
        c.affinity.extend(
            by_weight(&spec.preferred_affinity)
                .into_iter()
                .skip(relax.dropped_pref_affinity),
        );
        c.anti_affinity.extend(
            by_weight(&spec.preferred_anti_affinity)
                .into_iter()
                .skip(relax.dropped_pref_anti),
        );
    }
    c
}

#[cfg(test)]
#[path = "podreqs_tests.rs"]
mod tests;
