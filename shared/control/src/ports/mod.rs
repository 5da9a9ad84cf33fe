//! The ports `control` is written against. Adapters implement them: `kerf-kube` the
//! [`Cluster`], `kerf-aws` the [`Cloud`], [`Queue`] and [`Publisher`]; `kerf-sim`
//! implements every one of them in memory for tests and the simulator.
//!
//! Every port returns a typed error that says whether retrying can help.

pub mod clock;
pub mod cloud;
pub mod cluster;
pub mod hint;
pub mod publish;
pub mod queue;
pub mod reason;
pub mod termination;
pub mod timer;

pub use clock::{Clock, ManualClock, SystemClock};
pub use cloud::{
    Cloud, CloudError, HealthCategory, Instance, LaunchOption, LaunchRequest, Launched,
    TEMPLATE_UNUSED_FOR, Unhealthy,
};
pub use cluster::{
    Cluster, ClusterError, Deleted, EventSpec, EventType, Evicted, InvolvedObject, LeaseOutcome,
    LeaseRequest, Snapshot, Target,
};
pub use publish::{DecisionEvent, PublishError, Publisher};
pub use queue::{Queue, QueueError};
pub use reason::EventReason;
pub use termination::TerminationMessage;
pub use timer::{Timer, TimerKind};
