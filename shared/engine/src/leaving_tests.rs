use kerf_catalog::Resources;

use crate::fixtures::{node_res as res, one_type_catalog as catalog};
use crate::labels;
use crate::model::{LabelSelector, Node, NodeClaim, NodePool, OwnerKind, Pdb, Pod, PodSpec};
use crate::{Options, provision};

use super::*;

/// A pod's requests: CPU and one pod slot.
fn asks(cpu_m: i64) -> Resources {
    let mut r = Resources::new();
    r.set("cpu", cpu_m);
    r.set("pods", 1000);
    r
}

fn bound(name: &str, app: &str) -> Pod {
    Pod {
        namespace: "default".into(),
        name: name.into(),
        uid: name.into(),
        labels: [("app".to_string(), app.to_string())].into(),
        node_name: Some("n1".into()),
        phase: "Running".into(),
        owner: OwnerKind::ReplicaSet,
        spec: PodSpec {
            requests: asks(1000),
            ..Default::default()
        },
        ..Default::default()
    }
}

/// Node `n1` (4 CPUs) of claim `c1`, full with three movable web pods and pods that do not
/// move: a DaemonSet pod, a mirror pod, a `do-not-disrupt` pod, a pod a budget never lets go
/// and a finished pod.
fn snapshot() -> Snapshot {
    let node = Node {
        name: "n1".into(),
        provider_id: "aws:///z1/i-1".into(),
        labels: [
            (labels::NODEPOOL.to_string(), "default".to_string()),
            (labels::INSTANCE_TYPE.to_string(), "m.xlarge".to_string()),
            (labels::ZONE.to_string(), "z1".to_string()),
            (labels::INITIALIZED.to_string(), "true".to_string()),
        ]
        .into(),
        allocatable: res(4000, 58),
        capacity: res(4000, 58),
        ..Default::default()
    };
    let claim = NodeClaim {
        name: "c1".into(),
        node_pool: "default".into(),
        provider_id: "aws:///z1/i-1".into(),
        node_name: Some("n1".into()),
        allocatable: res(4000, 58),
        capacity: res(4000, 58),
        ..Default::default()
    };
    let mut pods: Vec<Pod> = (0..3).map(|i| bound(&format!("web-{i}"), "web")).collect();
    let small = |name: &str| {
        let mut p = bound(name, name);
        p.spec.requests = asks(10);
        p
    };
    let mut ds = small("ds");
    ds.owner = OwnerKind::DaemonSet;
    let mut mirror = small("mirror");
    mirror.mirror = true;
    let mut stay = small("stay");
    stay.annotations
        .insert(kerf_labels::DO_NOT_DISRUPT.into(), "true".into());
    let guarded = small("guarded");
    let mut done = small("done");
    done.phase = "Succeeded".into();
    pods.extend([ds, mirror, stay, guarded, done]);
    Snapshot {
        pods,
        nodes: vec![node],
        node_claims: vec![claim],
        node_pools: vec![NodePool {
            name: "default".into(),
            catalog: catalog(),
            ..Default::default()
        }],
        pdbs: vec![Pdb {
            namespace: "default".into(),
            name: "guarded".into(),
            selector: Some(LabelSelector {
                match_labels: [("app".to_string(), "guarded".to_string())].into(),
                ..Default::default()
            }),
            blocks_all: true,
            ..Default::default()
        }],
        ..Default::default()
    }
}

fn moved_names(snap: &Snapshot) -> Vec<String> {
    let l = Leaving::of(snap);
    l.pods.iter().map(|&i| snap.pods[i].name.clone()).collect()
}

#[test]
fn a_live_node_leaves_nothing_to_place() {
    let snap = snapshot();
    assert!(Leaving::of(&snap).nodes.is_empty());
    let plan = provision(&snap, &Options::default());
    assert!(plan.launches.is_empty() && plan.nominations.is_empty());
}

#[test]
fn a_deleting_claim_or_node_has_its_movable_pods_placed_in_one_launch() {
    for deleting_node in [false, true] {
        let mut snap = snapshot();
        if deleting_node {
            snap.nodes[0].deleting = true;
        } else {
            snap.node_claims[0].deleting = true;
        }
        assert_eq!(moved_names(&snap), ["web-0", "web-1", "web-2"]);
        let plan = provision(&snap, &Options::default());
        assert_eq!(plan.launches.len(), 1, "{:?}", plan.launches);
        let mut placed = plan.launches[0].pods.clone();
        placed.sort();
        assert_eq!(placed, ["default/web-0", "default/web-1", "default/web-2"]);
        assert!(
            plan.nominations.is_empty(),
            "nothing lands on the leaving node"
        );
        assert_eq!(plan.summary.pending_pods, 3);
    }
}

#[test]
fn a_claim_launched_for_them_earlier_takes_them_without_another_launch() {
    let mut snap = snapshot();
    snap.node_claims[0].deleting = true;
    snap.node_claims.push(NodeClaim {
        name: "c2".into(),
        node_pool: "default".into(),
        allocatable: res(4000, 58),
        capacity: res(4000, 58),
        ..Default::default()
    });
    let plan = provision(&snap, &Options::default());
    assert!(plan.launches.is_empty(), "{:?}", plan.launches);
    assert_eq!(plan.nominations.len(), 3);
    assert!(plan.nominations.iter().all(|n| n.node == "c2"));
}

#[test]
fn a_budget_that_allows_evictions_now_does_not_keep_its_pod() {
    let mut snap = snapshot();
    snap.node_claims[0].deleting = true;
    snap.pdbs[0].blocks_all = false;
    assert!(moved_names(&snap).contains(&"guarded".to_string()));
}
