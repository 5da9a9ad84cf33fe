//! Logs in Karpenter's JSON shape: one object per line with `level`, `time`, `logger`,
//! `message`, `commit`, `controller` and the message's own keys (`NodeClaim: {name}`,
//! `provider-id`, `instance-type`, ...), so `kubectl logs … | jq` habits carry over to
//! CloudWatch Logs. The sink is pluggable: stdout in the functions, memory in tests.

use std::sync::{Arc, Mutex};

use serde_json::{Map, Value, json};

use crate::ports::Clock;

/// Log levels, as Karpenter prints them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    Debug,
    Info,
    Warn,
    Error,
}

impl Level {
    pub fn as_str(self) -> &'static str {
        match self {
            Level::Debug => "DEBUG",
            Level::Info => "INFO",
            Level::Warn => "WARN",
            Level::Error => "ERROR",
        }
    }

    /// Parses `debug`, `info`, `warn`/`warning` or `error` (any case).
    pub fn parse(s: &str) -> Option<Level> {
        match s.to_ascii_lowercase().as_str() {
            "debug" | "trace" => Some(Level::Debug),
            "info" => Some(Level::Info),
            "warn" | "warning" => Some(Level::Warn),
            "error" => Some(Level::Error),
            _ => None,
        }
    }
}

/// Where log lines go.
pub trait LogSink: Send + Sync {
    /// Writes one complete JSON line (without the newline).
    fn write(&self, line: &str);
}

/// Standard output, one line per entry (what Lambda ships to CloudWatch Logs).
#[derive(Debug, Default)]
pub struct StdoutSink;

impl LogSink for StdoutSink {
    fn write(&self, line: &str) {
        use std::io::Write;
        let mut out = std::io::stdout().lock();
        // A closed stdout must not fail a reconcile; there is nowhere else to report it.
        let _ = writeln!(out, "{line}");
    }
}

/// Keeps every line, for tests and the simulator.
#[derive(Debug, Default)]
pub struct MemorySink {
    lines: Mutex<Vec<String>>,
}

impl MemorySink {
    /// Every line written so far.
    pub fn lines(&self) -> Vec<String> {
        self.lines.lock().map(|l| l.clone()).unwrap_or_default()
    }

    /// The entries written so far, parsed.
    pub fn entries(&self) -> Vec<Value> {
        self.lines()
            .iter()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect()
    }

    /// The entries with this message.
    pub fn with_message(&self, message: &str) -> Vec<Value> {
        self.entries()
            .into_iter()
            .filter(|e| e["message"] == message)
            .collect()
    }
}

impl LogSink for MemorySink {
    fn write(&self, line: &str) {
        if let Ok(mut l) = self.lines.lock() {
            l.push(line.to_string());
        }
    }
}

/// The logger every reconciler writes through.
#[derive(Clone)]
pub struct Logger {
    sink: Arc<dyn LogSink>,
    clock: Arc<dyn Clock>,
    level: Level,
}

impl std::fmt::Debug for Logger {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Logger")
            .field("level", &self.level)
            .finish_non_exhaustive()
    }
}

/// The version reported in every line's `commit` key.
pub const COMMIT: &str = env!("CARGO_PKG_VERSION");

impl Logger {
    /// A logger writing entries at `level` or above.
    pub fn new(sink: Arc<dyn LogSink>, clock: Arc<dyn Clock>, level: Level) -> Self {
        Logger { sink, clock, level }
    }

    /// Whether entries at `level` are written.
    pub fn enabled(&self, level: Level) -> bool {
        level >= self.level
    }

    /// Writes one entry; `fields` (an object) follows the standard keys.
    pub fn log(&self, level: Level, controller: &str, message: &str, fields: Value) {
        if !self.enabled(level) {
            return;
        }
        let time = self
            .clock
            .now()
            .strftime("%Y-%m-%dT%H:%M:%S%.3fZ")
            .to_string();
        let mut m = Map::new();
        m.insert("level".into(), json!(level.as_str()));
        m.insert("time".into(), json!(time));
        m.insert("logger".into(), json!("controller"));
        m.insert("message".into(), json!(crate::redact::scrub(message)));
        m.insert("commit".into(), json!(COMMIT));
        m.insert("controller".into(), json!(controller));
        if let Value::Object(mut extra) = fields {
            extra.values_mut().for_each(crate::redact::scrub_value);
            m.extend(extra);
        }
        self.sink.write(&Value::Object(m).to_string());
    }

    pub fn debug(&self, controller: &str, message: &str, fields: Value) {
        self.log(Level::Debug, controller, message, fields);
    }

    pub fn info(&self, controller: &str, message: &str, fields: Value) {
        self.log(Level::Info, controller, message, fields);
    }

    pub fn warn(&self, controller: &str, message: &str, fields: Value) {
        self.log(Level::Warn, controller, message, fields);
    }

    pub fn error(&self, controller: &str, message: &str, fields: Value) {
        self.log(Level::Error, controller, message, fields);
    }

    /// Writes a raw JSON line (CloudWatch embedded metrics), whatever the level.
    pub fn raw(&self, line: &Value) {
        self.sink.write(&line.to_string());
    }
}

/// Controller names, as Karpenter's log lines carry them.
pub mod controllers {
    pub const PROVISIONER: &str = "provisioner";
    pub const LIFECYCLE: &str = "nodeclaim.lifecycle";
    pub const GARBAGE_COLLECTION: &str = "nodeclaim.garbagecollection";
    pub const INSTANCE_GARBAGE_COLLECTION: &str = "instance.garbagecollection";
    pub const WEBHOOK: &str = "webhook";
    pub const TERMINATION: &str = "node.termination";
    pub const DISRUPTION: &str = "disruption";
    pub const NODECLASS: &str = "nodeclass";
    pub const NODEPOOL: &str = "nodepool.counter";
    pub const INTERRUPTION: &str = "interruption";
    pub const HEALTH: &str = "node.health";
    pub const STATIC_PROVISIONING: &str = "provisioning.static";
    pub const STATIC_DEPROVISIONING: &str = "static.deprovisioning";
    pub const LAUNCH_TEMPLATE_GARBAGE_COLLECTION: &str = "launchtemplate.garbagecollection";
    pub const CAPACITY_RESERVATION_EXPIRATION: &str = "capacityreservation.expiration";
    pub const CAPACITY_RESERVATION_CAPACITY_TYPE: &str = "capacityreservation.capacitytype";
}

/// `{"name": name}`, the way Karpenter logs object references.
pub fn obj(name: &str) -> Value {
    json!({ "name": name })
}

/// `a, b, c and N other(s)`, the way Karpenter abbreviates long lists.
pub fn abbreviate(items: &[String], max: usize) -> String {
    if items.len() <= max {
        return items.join(", ");
    }
    format!(
        "{} and {} other(s)",
        items[..max].join(", "),
        items.len() - max
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ports::ManualClock;

    #[test]
    fn lines_have_karpenters_keys_and_respect_the_level() {
        let sink = Arc::new(MemorySink::default());
        let clock = Arc::new(ManualClock::new(
            "2026-03-08T13:42:09.138Z".parse().unwrap(),
        ));
        let log = Logger::new(sink.clone(), clock, Level::Info);
        log.debug("provisioner", "hidden", json!({}));
        log.info(
            "nodeclaim.lifecycle",
            "launched nodeclaim",
            json!({"NodeClaim": obj("default-x"), "provider-id": "aws:///a/i-1"}),
        );
        let e = sink.entries();
        assert_eq!(e.len(), 1);
        assert_eq!(e[0]["level"], "INFO");
        assert_eq!(e[0]["time"], "2026-03-08T13:42:09.138Z");
        assert_eq!(e[0]["logger"], "controller");
        assert_eq!(e[0]["controller"], "nodeclaim.lifecycle");
        assert_eq!(e[0]["NodeClaim"]["name"], "default-x");
        assert_eq!(e[0]["provider-id"], "aws:///a/i-1");
        assert_eq!(Level::parse("WARNING"), Some(Level::Warn));
    }

    #[test]
    fn urls_in_messages_and_fields_are_scrubbed() {
        let sink = Arc::new(MemorySink::default());
        let clock = Arc::new(ManualClock::new(
            "2026-03-08T13:42:09.138Z".parse().unwrap(),
        ));
        let log = Logger::new(sink.clone(), clock, Level::Info);
        let url = "https://u.lambda-url.us-east-1.on.aws/s3cret/validate";
        log.warn(
            "provisioner",
            &format!("create failed: Post \"{url}\""),
            json!({"error": format!("failed calling webhook: Post \"{url}\": EOF"),
                "nested": [{"why": url}], "provider-id": "aws:///a/i-1"}),
        );
        let lines = sink.lines();
        assert_eq!(lines.len(), 1);
        assert!(!lines[0].contains("s3cret"), "{}", lines[0]);
        let e = sink.entries();
        assert_eq!(
            e[0]["nested"][0]["why"],
            "https://u.lambda-url.us-east-1.on.aws/<redacted>"
        );
        assert_eq!(e[0]["provider-id"], "aws:///a/i-1");
    }

    #[test]
    fn long_lists_are_abbreviated() {
        let items: Vec<String> = (0..7).map(|i| format!("t{i}")).collect();
        assert_eq!(abbreviate(&items[..2], 5), "t0, t1");
        assert_eq!(abbreviate(&items, 5), "t0, t1, t2, t3, t4 and 2 other(s)");
    }
}
