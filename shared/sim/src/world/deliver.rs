//! Running Kerf's functions on the world's queues and schedules: the SQS event source
//! mappings (a batch of every visible message, settled as the mapping settles it; with
//! [`WorldOptions::duplicate_deliveries`] each batch is handled a second time in reverse
//! order, as at-least-once delivery may), the scheduled sweep and the disruption function,
//! and EC2's spot interruptions.

use jiff::SignedDuration;
use serde_json::Value;

use kerf_control::disrupt::Queues;
use kerf_control::handlers::events::{Invocation, Schedule, SqsEvent, to_json};
use kerf_control::handlers::{disruption, interruption, provisioner, termination};

use super::queue::Message;
use super::{SimQueue, World, rfc3339};

impl World {
    /// The batch again, newest first, when deliveries are duplicated.
    fn again(&self, messages: &[Message]) -> Option<SqsEvent> {
        if !self.options.duplicate_deliveries || messages.is_empty() {
            return None;
        }
        let mut reversed = messages.to_vec();
        reversed.reverse();
        Some(SimQueue::event(&reversed))
    }

    /// Delivers every visible queued message to the provisioner as one SQS batch; returns
    /// its response (failed messages come back after the visibility timeout).
    pub async fn deliver(&mut self) -> Value {
        let messages = self.queue.receive(10_000);
        let event = Invocation::Queue(SimQueue::event(&messages));
        self.provisioner_invocations += 1;
        let holder = self.holder();
        let resp = provisioner::handle(&self.provisioner, &self.queue, &holder, &event).await;
        let resp = to_json(&resp);
        if let Some(dup) = self.again(&messages) {
            let holder = self.holder();
            let q = &self.queue;
            provisioner::handle(&self.provisioner, q, &holder, &dup.into()).await;
        }
        self.queue.settle(&messages, &resp);
        resp
    }

    /// Delivers every visible termination message to the termination function.
    pub async fn deliver_termination(&mut self) -> Value {
        let messages = self.termination_queue.receive(10_000);
        let event = SimQueue::event(&messages);
        let (q, t) = (&self.termination_queue, &self.timer_queue);
        let resp = to_json(&termination::handle(&self.terminator, q, t, &event).await);
        if let Some(dup) = self.again(&messages) {
            termination::handle(&self.terminator, q, t, &dup).await;
        }
        self.termination_queue.settle(&messages, &resp);
        resp
    }

    /// Delivers every visible interruption message to the interruption function.
    pub async fn deliver_interruption(&mut self) -> Value {
        let messages = self.interruption_queue.receive(10_000);
        let event = SimQueue::event(&messages);
        let (q, o) = (&self.termination_queue, &self.interruption);
        let resp = to_json(&interruption::handle(&self.interrupter, q, &event, o).await);
        if let Some(dup) = self.again(&messages) {
            interruption::handle(&self.interrupter, q, &dup, o).await;
        }
        self.interruption_queue.settle(&messages, &resp);
        let failed = resp["batchItemFailures"].as_array().map_or(0, Vec::len);
        self.interruptions_handled += messages.len().saturating_sub(failed);
        resp
    }

    /// A spot interruption of these instances, as EC2 gives it: a warning on the interruption
    /// queue now, the instance taken back two minutes later.
    pub async fn interrupt(&mut self, instance_ids: &[String]) {
        let now = self.now();
        for id in instance_ids {
            let event = serde_json::json!({"version": "0", "id": format!("spot-{id}-{}", now.as_second()),
                "detail-type": "EC2 Spot Instance Interruption Warning", "source": "aws.ec2",
                "account": "123456789012", "time": rfc3339(now), "region": self.options.region,
                "resources": [format!("arn:aws:ec2:{}:123456789012:instance/{id}", self.options.region)],
                "detail": {"instance-id": id, "instance-action": "terminate"}});
            // EventBridge's delivery: it fails only when a test makes the queue's sends fail,
            // and a lost warning is then what the test wants to see.
            let _ =
                kerf_control::ports::Queue::send(&self.interruption_queue, &event.to_string(), 0)
                    .await;
            self.cloud.reclaim(id, now + SignedDuration::from_mins(2));
        }
    }

    /// The disruption function's queues.
    pub fn disruption_queues(&self) -> Queues<'_, SimQueue> {
        Queues {
            termination: &self.termination_queue,
            timers: &self.timer_queue,
        }
    }

    /// Runs the disruption function's scheduled pass now.
    pub async fn disrupt(&mut self) -> Value {
        let holder = format!("disruption-{}", self.holder());
        let event = Invocation::scheduled("kerf.schedule", "Disruption Sweep");
        let (ctx, opts) = (&self.disruptor, &self.disruption);
        let queues = self.disruption_queues();
        to_json(&disruption::handle(ctx, &queues, &holder, opts, &event).await)
    }

    /// Delivers every visible timer message to the disruption function as one SQS batch.
    pub async fn deliver_timers(&mut self) -> Value {
        let messages = self.timer_queue.receive(10_000);
        let event = Invocation::Queue(SimQueue::event(&messages));
        self.timer_invocations += 1;
        let holder = format!("disruption-{}", self.holder());
        let again = format!("disruption-{}", self.holder());
        let (ctx, opts) = (&self.disruptor, &self.disruption);
        let queues = self.disruption_queues();
        let resp = to_json(&disruption::handle(ctx, &queues, &holder, opts, &event).await);
        if let Some(dup) = self.again(&messages) {
            disruption::handle(ctx, &queues, &again, opts, &dup.into()).await;
        }
        self.timer_queue.settle(&messages, &resp);
        resp
    }

    /// Runs the provisioner's scheduled sweep now.
    pub async fn sweep(&mut self) -> Value {
        let mut event = Schedule::default();
        event.version = Some("0".into());
        event.id = Some(format!("sweep-{}", self.invocation));
        event.detail_type = "Scheduled Event".into();
        event.source = "aws.events".into();
        // The event's time, read from its RFC 3339 text into the crate's own time type.
        event.time = serde_json::from_value(serde_json::json!(rfc3339(self.now()))).ok();
        event.region = Some(self.options.region.clone());
        event.resources = Some(Vec::new());
        event.detail = Some(serde_json::json!({}));
        let event = Invocation::Schedule(Box::new(event));
        let holder = self.holder();
        to_json(&provisioner::handle(&self.provisioner, &self.queue, &holder, &event).await)
    }
}
