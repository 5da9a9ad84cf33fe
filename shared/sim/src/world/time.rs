//! How the world's time moves: a tick at a time, jumping over quiet time to the next moment
//! something is due on the in-process server's simulated clock, or following the wall clock
//! on a real control plane.

use jiff::{SignedDuration, Timestamp};
use kube::Client;

use super::{Server, World, WorldError};

impl World {
    /// Moves the clock one tick on; on a real control plane, once the wall clock is there
    /// (and to the wall clock when a slow tick left it behind).
    pub(super) async fn advance_clock(&self) {
        // Ticks keep their cadence: from the last tick, not from the (wall) reading.
        let next = self.clock.moved() + self.options.tick;
        if !self.is_real() {
            self.clock.advance_to(next);
            return;
        }
        let wait = next.duration_since(Timestamp::now());
        if let Ok(d) = std::time::Duration::try_from(wait) {
            tokio::time::sleep(d).await;
        }
        self.clock.advance_to(next.max(Timestamp::now()));
    }

    /// When something next happens by itself: a scheduled run, a queued message becoming
    /// due, an instance booting or being taken back, a kubelet turning its Node Ready.
    pub fn next_due(&self) -> Result<Timestamp, WorldError> {
        let zero = SignedDuration::ZERO;
        let timers = [
            self.queue.next_due(self.options.batch_window),
            self.termination_queue.next_due(zero),
            self.interruption_queue.next_due(zero),
            self.timer_queue.next_due(zero),
            self.cloud.next_change(),
            match &self.server {
                Server::InProcess(p) => p.kubelet.next_due()?,
                Server::Real(_) => None,
            },
        ];
        Ok(timers
            .into_iter()
            .flatten()
            .fold(self.next_sweep.min(self.next_disruption), Timestamp::min))
    }

    /// One tick, or with [`WorldOptions::skip_idle`] after a quiet tick, a jump to the tick
    /// that lands on the next due moment (never past `end`). Returns whether the tick changed
    /// the cluster (on a real control plane, where time cannot jump: always).
    pub async fn step_toward(&mut self, quiet: bool, end: Timestamp) -> Result<bool, WorldError> {
        let Server::InProcess(p) = &self.server else {
            self.tick().await?;
            return Ok(true);
        };
        if quiet && self.options.skip_idle {
            let land = self.next_due()?.min(end) - self.options.tick;
            if land > self.now() {
                self.clock.advance_to(land);
            }
        }
        let before = p.sim.resource_version();
        self.tick().await?;
        Ok(self.sim()?.resource_version() != before)
    }

    /// Ticks for `d` of simulated time.
    pub async fn run_for(&mut self, d: SignedDuration) -> Result<(), WorldError> {
        let end = self.now() + d;
        let mut quiet = false;
        while self.now() < end {
            quiet = !self.step_toward(quiet, end).await?;
        }
        Ok(())
    }

    /// Ticks until `done` holds (checked after each tick) or `max` passes; returns whether
    /// it held.
    pub async fn run_until<F, Fut>(
        &mut self,
        max: SignedDuration,
        mut done: F,
    ) -> Result<bool, WorldError>
    where
        F: FnMut(Client) -> Fut,
        Fut: std::future::Future<Output = bool>,
    {
        let end = self.now() + max;
        let mut quiet = false;
        while self.now() < end {
            quiet = !self.step_toward(quiet, end).await?;
            if done(self.client.clone()).await {
                return Ok(true);
            }
        }
        Ok(false)
    }
}
