//! Real-time running, for `kerf sim --serve`: simulated time follows the wall clock at a
//! chosen speed, and after its last step the cluster keeps running until told to stop.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use jiff::Timestamp;

use super::run::Runner;
use super::{Outcome, Progress, Scenario, ScenarioError};
use crate::world::WorldOptions;

/// Real-time running (`kerf sim --serve`): simulated time follows the wall clock.
#[derive(Debug, Clone)]
pub struct Pace {
    /// Simulated seconds per wall-clock second.
    pub speed: f64,
    /// Set to end the run after the current tick (Ctrl-C).
    pub stop: Arc<AtomicBool>,
    pub(super) wall: Instant,
    pub(super) sim: Timestamp,
}

impl Pace {
    /// Real time at `speed`, until `stop` is set.
    pub fn new(speed: f64, stop: Arc<AtomicBool>) -> Pace {
        Pace {
            speed,
            stop,
            wall: Instant::now(),
            sim: Timestamp::UNIX_EPOCH,
        }
    }

    pub(super) fn stopped(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }

    /// Sleeps until the wall clock catches up with simulated time `now`.
    pub(super) async fn wait(&self, now: Timestamp) {
        let ahead = now.duration_since(self.sim).as_secs_f64() / self.speed;
        let due = self.wall + Duration::from_secs_f64(ahead.max(0.0));
        tokio::time::sleep_until(due.into()).await;
    }
}

/// Runs `s` in real time on an API server listening on `port` (0: any), as `kerf sim
/// --serve` does: `ready` is told the server's URL once the objects are applied, failed
/// assertions become timeline lines, and after the last step the cluster keeps running until
/// `pace.stop` is set.
pub async fn serve(
    s: &Scenario,
    port: u16,
    logs: Option<std::path::PathBuf>,
    pace: Pace,
    progress: &mut dyn Progress,
    ready: &mut dyn FnMut(&str),
) -> Result<Outcome, ScenarioError> {
    let options = WorldOptions {
        start: Timestamp::now(),
        port,
        logs,
        ..WorldOptions::default()
    };
    let mut r = Runner::start(s, options, progress, Some(pace)).await?;
    // What `kubectl get namespaces` shows on a new cluster.
    for ns in ["default", "kube-system", "kube-public", "kube-node-lease"] {
        let doc = serde_json::json!({"apiVersion": "v1", "kind": "Namespace",
            "metadata": {"name": ns}});
        r.w.apply(&doc.to_string())
            .await
            .map_err(|e| r.fail(e.to_string()))?;
    }
    let url =
        r.w.sim()
            .map_err(|e| r.fail(e.to_string()))?
            .url()
            .to_string();
    ready(&url);
    r.steps(true).await?;
    r.forever().await?;
    Ok(r.finish().await)
}
