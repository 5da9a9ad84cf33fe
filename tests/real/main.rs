//! Kerf on a REAL Kubernetes control plane (`scripts/cluster.sh`: etcd, kube-apiserver,
//! kube-controller-manager, kube-scheduler and KWOK, on 127.0.0.1), one per test: the CRDs
//! and examples, least-privilege RBAC under the real authorizer, and provisioning then
//! termination through Kerf's real handlers. The binaries must be built
//! (`scripts/cluster.sh build`); every test stops its control plane, pass or fail.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers outside #[test] fns

mod beside;
mod conformance;
mod conformance_known;
mod crds;
mod observe;
mod outage;
mod provisioning;
mod rbac;
mod setup;
mod webhook;
mod yaml;
