//! Every AWS operation and Kubernetes verb a function binary can reach: the call graph from
//! its `main`, breadth first, each function visited once per (generic `Api` types, fixed
//! `bool` arguments), with one call chain kept per finding for the failure messages.
//! `KERF_TRACE=1` prints every function reached.

use std::collections::{BTreeMap, VecDeque};

use crate::rust::Index;
use crate::visit::{Node, Visitor};

/// (service prefix, operation) → a call chain from `main`.
pub type Aws = BTreeMap<(String, String), Vec<String>>;
/// (Kubernetes type, verb, subresource) → a call chain from `main`.
pub type Kube = BTreeMap<(String, String, String), Vec<String>>;

/// What a function calls.
pub struct Calls {
    pub aws: Aws,
    pub kube: Kube,
}

fn chain(index: &Index, parents: &BTreeMap<Node, Node>, mut n: Node) -> Vec<String> {
    let mut out = vec![index.fns[n.f].label()];
    while let Some(p) = parents.get(&n) {
        out.push(index.fns[p.f].label());
        n = p.clone();
    }
    out.reverse();
    out
}

/// Follows the calls of `krate`'s `main`.
pub fn follow(index: &Index, sdk: &BTreeMap<String, Vec<String>>, krate: &str) -> Calls {
    let main = index
        .fns
        .iter()
        .position(|f| f.krate == krate && f.module.is_empty() && f.name == "main")
        .unwrap_or_else(|| panic!("{krate} has no main"));
    let root = Node {
        f: main,
        api: Vec::new(),
        consts: Vec::new(),
    };
    let mut parents: BTreeMap<Node, Node> = BTreeMap::new();
    let mut seen = std::collections::BTreeSet::from([root.clone()]);
    let mut queue = VecDeque::from([root]);
    let mut calls = Calls {
        aws: BTreeMap::new(),
        kube: BTreeMap::new(),
    };
    while let Some(node) = queue.pop_front() {
        if std::env::var("KERF_TRACE").is_ok() {
            eprintln!(
                "visit {} {:?} {:?}",
                index.fns[node.f].label(),
                node.api,
                node.consts
            );
        }
        let effects = Visitor::new(index, sdk, &node).run();
        for op in effects.aws {
            calls
                .aws
                .entry(op)
                .or_insert_with(|| chain(index, &parents, node.clone()));
        }
        for k in effects.kube {
            calls
                .kube
                .entry(k)
                .or_insert_with(|| chain(index, &parents, node.clone()));
        }
        for next in effects.calls {
            if seen.insert(next.clone()) {
                parents.insert(next.clone(), node.clone());
                queue.push_back(next);
            }
        }
    }
    calls
}
