//! Tests of the wait for volume detachment, against a Cluster port holding a node's
//! attachments, pods and claims.

use std::collections::BTreeMap;
use std::sync::Mutex;

use jiff::SignedDuration;
use k8s_openapi::api::core::v1::{Node, PersistentVolumeClaim, Taint};
use kerf_api::v1::{EC2NodeClass, EC2NodeClassStatus, NodeClaimStatus, NodePool, NodePoolStatus};
use kerf_catalog::unavailable::UnavailableOfferings;
use serde_json::{Value, json};

use super::*;
use crate::ports::{Deleted, Evicted, LeaseOutcome, LeaseRequest, Snapshot, Target};

/// The node's attachments (or the error listing them gives), pods and claims.
struct Fake {
    attachments: Result<Vec<VolumeAttachment>, ClusterError>,
    pods: Vec<Pod>,
    claims: BTreeMap<(String, String), Result<PersistentVolumeClaim, ClusterError>>,
    reads: Mutex<Vec<String>>,
}

fn unused<T>() -> Result<T, ClusterError> {
    Err(ClusterError::Fatal("not used by the volume check".into()))
}

impl Cluster for Fake {
    async fn snapshot(&self) -> Result<Snapshot, ClusterError> {
        unused()
    }
    async fn node_claims(&self) -> Result<Vec<NodeClaim>, ClusterError> {
        unused()
    }
    async fn node_claim(&self, _: &str) -> Result<Option<NodeClaim>, ClusterError> {
        unused()
    }
    async fn node(&self, _: &str) -> Result<Option<Node>, ClusterError> {
        unused()
    }
    async fn pods_on_node(&self, node: &str) -> Result<Vec<Pod>, ClusterError> {
        self.reads.lock().unwrap().push(format!("pods {node}"));
        Ok(self.pods.clone())
    }
    async fn volume_attachments(&self, node: &str) -> Result<Vec<VolumeAttachment>, ClusterError> {
        self.reads
            .lock()
            .unwrap()
            .push(format!("attachments {node}"));
        self.attachments.clone()
    }
    async fn persistent_volume_claim(
        &self,
        ns: &str,
        name: &str,
    ) -> Result<Option<PersistentVolumeClaim>, ClusterError> {
        self.reads
            .lock()
            .unwrap()
            .push(format!("claim {ns}/{name}"));
        match self.claims.get(&(ns.to_string(), name.to_string())) {
            None => Ok(None),
            Some(r) => r.clone().map(Some),
        }
    }
    async fn delete_pod(
        &self,
        _: &str,
        _: &str,
        _: Option<&str>,
        _: Option<i64>,
    ) -> Result<Deleted, ClusterError> {
        unused()
    }
    async fn create_node_claim(
        &self,
        _: &NodePool,
        _: NodeClaim,
    ) -> Result<NodeClaim, ClusterError> {
        unused()
    }
    async fn patch_node_claim_status(
        &self,
        _: &str,
        _: Option<&str>,
        _: &NodeClaimStatus,
    ) -> Result<NodeClaim, ClusterError> {
        unused()
    }
    async fn set_node_claim_conditions(
        &self,
        _: &str,
        _: &[Condition],
        _: Timestamp,
    ) -> Result<NodeClaim, ClusterError> {
        unused()
    }
    async fn label_node_claim(
        &self,
        _: &str,
        _: &BTreeMap<String, String>,
    ) -> Result<NodeClaim, ClusterError> {
        unused()
    }
    async fn patch_node_class_status(
        &self,
        _: &str,
        _: &EC2NodeClassStatus,
    ) -> Result<EC2NodeClass, ClusterError> {
        unused()
    }
    async fn patch_node_pool_status(
        &self,
        _: &str,
        _: &NodePoolStatus,
    ) -> Result<(), ClusterError> {
        unused()
    }
    async fn annotate_node_claim(
        &self,
        _: &str,
        _: &BTreeMap<String, String>,
    ) -> Result<NodeClaim, ClusterError> {
        unused()
    }
    async fn label_node(
        &self,
        _: &str,
        _: &BTreeMap<String, String>,
    ) -> Result<Node, ClusterError> {
        unused()
    }
    async fn relabel_node(
        &self,
        _: &str,
        _: &BTreeMap<String, Option<String>>,
    ) -> Result<Node, ClusterError> {
        unused()
    }
    async fn relabel_node_claim(
        &self,
        _: &str,
        _: &BTreeMap<String, Option<String>>,
    ) -> Result<NodeClaim, ClusterError> {
        unused()
    }
    async fn delete_node_claim(&self, _: &str, _: Option<&str>) -> Result<Deleted, ClusterError> {
        unused()
    }
    async fn taint_node(&self, _: &str, _: &Taint) -> Result<Node, ClusterError> {
        unused()
    }
    async fn untaint_node(&self, _: &str, _: &str) -> Result<Node, ClusterError> {
        unused()
    }
    async fn cordon_node(&self, _: &str, _: bool) -> Result<Node, ClusterError> {
        unused()
    }
    async fn update_node(&self, _: &Node) -> Result<Node, ClusterError> {
        unused()
    }
    async fn delete_node(&self, _: &str, _: Option<&str>) -> Result<Deleted, ClusterError> {
        unused()
    }
    async fn evict_pod(&self, _: &str, _: &str, _: Option<&str>) -> Result<Evicted, ClusterError> {
        unused()
    }
    async fn add_finalizer(&self, _: &Target, _: &str) -> Result<(), ClusterError> {
        unused()
    }
    async fn remove_finalizer(
        &self,
        _: &Target,
        _: &str,
        _: Option<&str>,
    ) -> Result<(), ClusterError> {
        unused()
    }
    async fn emit_event(&self, _: &EventSpec, _: Timestamp) -> Result<(), ClusterError> {
        unused()
    }
    async fn acquire_lease(&self, _: &LeaseRequest) -> Result<LeaseOutcome, ClusterError> {
        unused()
    }
    async fn release_lease(&self, _: &LeaseRequest) -> Result<(), ClusterError> {
        unused()
    }
    async fn unavailable_offerings(
        &self,
        _: Timestamp,
    ) -> Result<UnavailableOfferings, ClusterError> {
        unused()
    }
    async fn record_unavailable(
        &self,
        _: &UnavailableOfferings,
        _: Timestamp,
    ) -> Result<(), ClusterError> {
        unused()
    }
}

fn attachment(name: &str, pv: &str) -> VolumeAttachment {
    serde_json::from_value(json!({"metadata": {"name": name},
        "spec": {"attacher": "ebs.csi.aws.com", "nodeName": "n1",
            "source": {"persistentVolumeName": pv}},
        "status": {"attached": true}}))
    .unwrap()
}

fn pod(name: &str, claim: &str, extra: Value) -> Pod {
    let mut v = json!({"metadata": {"name": name, "namespace": "db"},
        "spec": {"containers": [{"name": "c", "image": "i"}], "nodeName": "n1",
            "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": claim}}]},
        "status": {"phase": "Running"}});
    if let (Value::Object(a), Value::Object(b)) = (&mut v, extra) {
        for (k, val) in b {
            if let (Some(Value::Object(inner)), Value::Object(add)) = (a.get_mut(&k), &val) {
                inner.extend(add.clone());
            } else {
                a.insert(k, val);
            }
        }
    }
    serde_json::from_value(v).unwrap()
}

fn claim(name: &str, pv: &str) -> PersistentVolumeClaim {
    serde_json::from_value(json!({"metadata": {"name": name, "namespace": "db"},
        "spec": {"volumeName": pv, "accessModes": ["ReadWriteOnce"]}}))
    .unwrap()
}

fn fake(attachments: Result<Vec<VolumeAttachment>, ClusterError>, pods: Vec<Pod>) -> Fake {
    Fake {
        attachments,
        pods,
        claims: BTreeMap::new(),
        reads: Mutex::default(),
    }
}

fn t(secs: i64) -> Timestamp {
    "2026-01-01T00:00:00Z".parse::<Timestamp>().unwrap() + SignedDuration::from_secs(secs)
}

const TOLERATES: &str = "karpenter.sh/disrupted";

#[tokio::test]
async fn waits_while_an_attachment_remains() {
    let f = fake(Ok(vec![attachment("csi-1", "pv-1")]), vec![]);
    let v = check(&f, "n1", Some(t(600)), t(0)).await;
    assert_eq!(v, Volumes::Attached(vec!["csi-1".into()]));
    let cond = v.condition().unwrap();
    assert_eq!(
        (cond.type_.as_str(), cond.status, cond.reason.as_str()),
        (VOLUMES_DETACHED, ConditionStatus::Unknown, AWAITING)
    );
    assert!(matches!(
        v.wait(),
        Some(Step::Requeue {
            seconds: VOLUME_REQUEUE,
            ..
        })
    ));
}

#[tokio::test]
async fn proceeds_once_the_attachments_are_gone() {
    let f = fake(Ok(vec![]), vec![pod("web-0", "data-web-0", json!({}))]);
    let v = check(&f, "n1", None, t(0)).await;
    assert_eq!(v, Volumes::Detached);
    assert_eq!(v.wait(), None);
    let cond = v.condition().unwrap();
    assert_eq!(cond.status, ConditionStatus::True);
    assert_eq!(cond.reason, VOLUMES_DETACHED);
    // Nothing attached: no need to read the pods.
    assert_eq!(*f.reads.lock().unwrap(), ["attachments n1"]);
}

#[tokio::test]
async fn ignores_attachments_of_pods_the_drain_leaves() {
    let tolerant = json!({"spec": {"tolerations": [{"key": TOLERATES, "operator": "Exists"}]}});
    let mirror = json!({"metadata": {"annotations": {"kubernetes.io/config.mirror": "x"}}});
    let mut f = fake(
        Ok(vec![
            attachment("csi-a", "pv-a"),
            attachment("csi-b", "pv-b"),
            attachment("csi-c", "pv-c"),
        ]),
        vec![
            pod("agent", "claim-a", tolerant),
            pod("static", "claim-b", mirror),
            pod("app", "claim-c", json!({})),
        ],
    );
    for (c, pv) in [
        ("claim-a", "pv-a"),
        ("claim-b", "pv-b"),
        ("claim-c", "pv-c"),
    ] {
        f.claims.insert(("db".into(), c.into()), Ok(claim(c, pv)));
    }
    let v = check(&f, "n1", None, t(0)).await;
    assert_eq!(v, Volumes::Attached(vec!["csi-c".into()]));
    // Only the claims of pods that stay are read.
    let reads = f.reads.lock().unwrap().clone();
    assert!(reads.contains(&"claim db/claim-a".to_string()), "{reads:?}");
    assert!(
        !reads.contains(&"claim db/claim-c".to_string()),
        "{reads:?}"
    );
}

#[tokio::test]
async fn a_missing_claim_of_a_staying_pod_ignores_nothing() {
    let tolerant = json!({"spec": {"tolerations": [{"key": TOLERATES, "operator": "Exists"}]}});
    let mut f = fake(
        Ok(vec![attachment("csi-a", "pv-a")]),
        vec![pod("agent", "gone", tolerant)],
    );
    f.claims.insert(
        ("db".into(), "gone".into()),
        Err(ClusterError::NotFound("gone".into())),
    );
    let v = check(&f, "n1", None, t(0)).await;
    assert_eq!(v, Volumes::Attached(vec!["csi-a".into()]));
}

#[tokio::test]
async fn skips_the_wait_after_the_grace_period() {
    let f = fake(Ok(vec![attachment("csi-1", "pv-1")]), vec![]);
    let v = check(&f, "n1", Some(t(60)), t(60)).await;
    assert_eq!(v, Volumes::Elapsed(vec!["csi-1".into()]));
    assert_eq!(v.wait(), None);
    let cond = v.condition().unwrap();
    assert_eq!(
        (cond.status, cond.reason.as_str(), cond.message.as_str()),
        (ConditionStatus::False, ELAPSED, ELAPSED)
    );
}

#[tokio::test]
async fn a_failed_list_requeues_and_records_nothing() {
    for err in [
        ClusterError::Transient("timeout".into()),
        ClusterError::Fatal("forbidden".into()),
    ] {
        let f = fake(Err(err.clone()), vec![]);
        let v = check(&f, "n1", Some(t(600)), t(0)).await;
        assert_eq!(v, Volumes::Unreadable(err));
        assert_eq!(v.condition(), None);
        assert!(matches!(
            v.wait(),
            Some(Step::Requeue {
                seconds: VOLUME_REQUEUE,
                ..
            })
        ));
    }
}

#[tokio::test]
async fn a_failed_claim_read_requeues() {
    let tolerant = json!({"spec": {"tolerations": [{"key": TOLERATES, "operator": "Exists"}]}});
    let mut f = fake(
        Ok(vec![attachment("csi-a", "pv-a")]),
        vec![pod("agent", "claim-a", tolerant)],
    );
    let err = ClusterError::Transient("reset".into());
    f.claims
        .insert(("db".into(), "claim-a".into()), Err(err.clone()));
    let v = check(&f, "n1", None, t(0)).await;
    assert_eq!(v, Volumes::Unreadable(err));
    assert!(v.wait().is_some());
}

#[tokio::test]
async fn past_the_deadline_a_failed_list_no_longer_holds_the_node() {
    let f = fake(Err(ClusterError::Transient("timeout".into())), vec![]);
    let v = check(&f, "n1", Some(t(60)), t(61)).await;
    assert_eq!(v, Volumes::Elapsed(vec![]));
    assert_eq!(v.wait(), None);
}

#[test]
fn inline_attachments_never_hold_the_node() {
    let mut a = attachment("csi-inline", "pv");
    a.spec.source.persistent_volume_name = None;
    assert!(pending(&[a], &BTreeSet::new()).is_empty());
}

fn claim_with(conditions: Value) -> NodeClaim {
    serde_json::from_value(json!({"apiVersion": "karpenter.sh/v1", "kind": "NodeClaim",
        "metadata": {"name": "c"},
        "spec": {"requirements": [], "nodeClassRef": {"group": "g", "kind": "k", "name": "n"}},
        "status": {"conditions": conditions}}))
    .unwrap()
}

fn cond(type_: &str, status: &str, reason: &str) -> Value {
    json!({"type": type_, "status": status, "reason": reason, "message": "",
        "lastTransitionTime": "2026-01-01T00:00:00Z"})
}

#[test]
fn a_drained_node_waiting_for_its_volumes_is_still_the_terminations() {
    let drained = cond("Drained", "True", "Drained");
    let draining = claim_with(json!([cond("Drained", "Unknown", "Draining")]));
    assert!(super::super::in_progress(&draining));
    let waiting = claim_with(json!([drained.clone()]));
    assert!(
        super::super::in_progress(&waiting),
        "volumes not checked yet"
    );
    let awaiting = claim_with(json!([
        drained.clone(),
        cond(VOLUMES_DETACHED, "Unknown", AWAITING)
    ]));
    assert!(super::super::in_progress(&awaiting));
    for done in [
        cond(VOLUMES_DETACHED, "True", VOLUMES_DETACHED),
        cond(VOLUMES_DETACHED, "False", ELAPSED),
    ] {
        let c = claim_with(json!([drained.clone(), done]));
        assert!(!super::super::in_progress(&c));
        assert!(settled(&c));
    }
    assert!(
        !super::super::in_progress(&claim_with(json!([]))),
        "never drained"
    );
}
