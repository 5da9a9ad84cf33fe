//! Real-time running, for `kerf sim --serve`: simulated time follows the wall clock at a
//! chosen speed, and after its last step the cluster keeps running in real time until told to
//! stop. Simulated time starts early enough never to pass the wall clock.

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

    /// From simulated time `now` on, real time: simulated seconds are wall-clock seconds.
    pub(super) fn real_time_from(&mut self, now: Timestamp) {
        self.speed = 1.0;
        self.sim = now;
        self.wall = Instant::now();
    }

    /// Where simulated time starts so that, at this speed, it never passes the wall clock
    /// while the steps run (at most `span` of simulated time) nor afterwards (real time):
    /// timestamps kubectl reads are never in its future, so its own age arithmetic
    /// (`kubectl describe`'s Events) never says `<invalid>`.
    pub fn start_for(&self, wall_now: Timestamp, span: jiff::SignedDuration) -> Timestamp {
        let lead = span.as_secs_f64() * (1.0 - 1.0 / self.speed.max(1.0));
        wall_now - jiff::SignedDuration::from_secs_f64(lead.max(0.0))
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
        start: pace.start_for(Timestamp::now(), s.span()),
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

#[cfg(test)]
mod tests {
    use jiff::SignedDuration;

    use super::*;

    #[test]
    fn simulated_time_never_passes_the_wall_clock() {
        let wall0: Timestamp = "2026-11-28T12:00:00Z".parse().unwrap_or_default();
        let span = SignedDuration::from_mins(10);
        for speed in [1.0, 2.0, 10.0, 60.0] {
            let p = Pace::new(speed, Arc::new(AtomicBool::new(false)));
            let start = p.start_for(wall0, span);
            // Through the steps (span of simulated time at `speed`), then real time.
            for tenth in 0..=20 {
                let wall =
                    SignedDuration::from_secs_f64(span.as_secs_f64() / speed * tenth as f64 / 10.0);
                let sim_elapsed = (wall.as_secs_f64() * speed).min(span.as_secs_f64())
                    + (wall.as_secs_f64() - span.as_secs_f64() / speed).max(0.0);
                let sim = start + SignedDuration::from_secs_f64(sim_elapsed);
                assert!(
                    sim <= wall0 + wall + SignedDuration::from_millis(1),
                    "speed {speed}: {sim} after {}",
                    wall0 + wall
                );
            }
        }
        let p = Pace::new(1.0, Arc::new(AtomicBool::new(false)));
        assert_eq!(p.start_for(wall0, span), wall0, "real time starts now");
    }

    #[test]
    fn a_scenarios_span_is_its_waits_and_the_limits_of_its_untils() {
        let text = "name: s\nsteps:\n  - advance: 2m\n  - until: {running: 1}\n    within: 3m\n  \
                    - expect: {nodes: 1}\n";
        let s = Scenario::parse(text, "s.yaml", std::path::PathBuf::from(".")).unwrap();
        assert_eq!(s.span(), SignedDuration::from_mins(5));
    }
}
