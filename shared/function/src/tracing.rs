//! The `tracing` subscriber every function installs. Its level follows Lambda's log controls
//! (`AWS_LAMBDA_LOG_LEVEL`, else `RUST_LOG`, else INFO), except that the Lambda runtime's
//! own TRACE events are never written, whatever those variables say: one of them prints each
//! raw invocation event, and the webhook's carries its secret path.

use lambda_runtime::tracing::subscriber::filter::{EnvFilter, FilterExt, LevelFilter, filter_fn};
use lambda_runtime::tracing::subscriber::fmt::MakeWriter;
use lambda_runtime::tracing::subscriber::prelude::*;
use lambda_runtime::tracing::subscriber::{Layer, Registry, fmt, registry};
use lambda_runtime::tracing::{Level, Metadata, Subscriber};

/// What the environment asks of the subscriber.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TraceSettings {
    /// `AWS_LAMBDA_LOG_LEVEL`, else `RUST_LOG`: a level or a list of directives.
    pub level: Option<String>,
    /// Whether lines are JSON (`AWS_LAMBDA_LOG_FORMAT=JSON`).
    pub json: bool,
}

impl TraceSettings {
    /// Reads Lambda's log controls.
    pub fn from_env() -> TraceSettings {
        let var = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
        TraceSettings {
            level: var("AWS_LAMBDA_LOG_LEVEL").or_else(|| var("RUST_LOG")),
            json: var("AWS_LAMBDA_LOG_FORMAT").is_some_and(|f| f.eq_ignore_ascii_case("json")),
        }
    }
}

/// Whether an event may be written: anything but the Lambda runtime's TRACE events.
fn allowed(meta: &Metadata<'_>) -> bool {
    !(*meta.level() == Level::TRACE && meta.target().starts_with("lambda_runtime"))
}

/// The level filter: a bare level, or directives (`RUST_LOG` syntax) over an INFO default.
fn env_filter(level: Option<&str>) -> EnvFilter {
    let text = level.unwrap_or("INFO");
    match text.parse::<LevelFilter>() {
        Ok(l) => EnvFilter::builder()
            .with_default_directive(l.into())
            .parse_lossy(""),
        Err(_) => EnvFilter::builder()
            .with_default_directive(LevelFilter::INFO.into())
            .parse_lossy(text),
    }
}

/// The subscriber for `settings`, writing to `writer`.
pub fn subscriber<W>(settings: &TraceSettings, writer: W) -> impl Subscriber + Send + Sync
where
    W: for<'w> MakeWriter<'w> + Send + Sync + 'static,
{
    let lines = fmt::layer()
        .with_target(false)
        .without_time()
        .with_writer(writer);
    let lines: Box<dyn Layer<Registry> + Send + Sync> = if settings.json {
        lines.json().boxed()
    } else {
        lines.boxed()
    };
    registry()
        .with(lines.with_filter(filter_fn(allowed).and(env_filter(settings.level.as_deref()))))
}

/// Installs [`subscriber`] for the environment's settings, writing to stdout.
pub fn init() {
    let sub = subscriber(&TraceSettings::from_env(), std::io::stdout);
    // A second install (tests, or a function calling this twice) keeps the first one.
    let _ = lambda_runtime::tracing::subscriber::util::SubscriberInitExt::try_init(sub);
}

#[cfg(test)]
#[path = "tracing_tests.rs"]
mod tests;
