//! Kerf's end-to-end suites, one module each, built as one test binary. Tests written with
//! [`on_both!`] run on both API servers: `NAME::in_process` on Kerf's in-process server (in
//! simulated time) and `NAME::real` on a real control plane of their own (etcd,
//! kube-apiserver, kube-controller-manager, kube-scheduler and KWOK from
//! `scripts/cluster.sh`, which must be built; in wall-clock time).

/// An end-to-end test on both servers: `async fn NAME(on) { ... }` becomes the module `NAME`
/// with the tests `in_process` and `real`, each calling the body with its
/// [`kerf_e2e::world::On`].
macro_rules! on_both {
    ($(#[$meta:meta])* async fn $name:ident($on:ident) $body:block) => {
        $(#[$meta])*
        mod $name {
            #[allow(unused_imports)]
            use super::*;

            async fn run($on: kerf_e2e::world::On) $body

            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn in_process() {
                run(kerf_e2e::world::On::InProcess).await
            }

            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn real() {
                run(kerf_e2e::world::On::Real).await
            }
        }
    };
}

mod capacity;
mod consolidatable;
mod crash;
mod delivery;
mod disruption;
mod emptiness;
mod flaky;
mod from_aws;
mod handlers;
mod health;
mod interruption;
mod overlays;
mod pdb;
mod provisioning;
mod repair;
mod reservations;
mod statics;
mod termination;
mod timers;
mod volumes;
