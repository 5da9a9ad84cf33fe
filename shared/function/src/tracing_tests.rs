use std::io::Write;
use std::sync::{Arc, Mutex};

use lambda_runtime::tracing::{info, trace};

use super::*;

/// A writer keeping every line in memory.
#[derive(Clone, Default)]
struct Memory(Arc<Mutex<Vec<u8>>>);

impl Write for Memory {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl<'w> MakeWriter<'w> for Memory {
    type Writer = Memory;
    fn make_writer(&'w self) -> Memory {
        self.clone()
    }
}

/// What `settings` writes when the runtime traces a raw event and Kerf traces and informs.
fn written(settings: TraceSettings) -> String {
    let out = Memory::default();
    {
        let _guard = lambda_runtime::tracing::subscriber::util::SubscriberInitExt::set_default(
            subscriber(&settings, out.clone()),
        );
        trace!(
            target: "lambda_runtime::layers::api_response",
            body = "{\"rawPath\":\"/s3cret/validate\"}",
            "raw JSON event received from Lambda"
        );
        trace!(target: "kerf_webhook", "kerf trace line");
        info!(target: "kerf_webhook", "kerf info line");
    }
    String::from_utf8(out.0.lock().unwrap().clone()).unwrap()
}

#[test]
fn the_raw_event_trace_stays_off_at_every_level() {
    for level in [
        "TRACE",
        "trace",
        "lambda_runtime=trace,trace",
        "info,lambda_runtime::layers=trace",
    ] {
        for json in [false, true] {
            let out = written(TraceSettings {
                level: Some(level.into()),
                json,
            });
            assert!(!out.contains("s3cret"), "{level}: {out}");
            assert!(!out.contains("raw JSON event"), "{level}: {out}");
            assert!(out.contains("kerf info line"), "{level}: {out}");
        }
    }
    let out = written(TraceSettings {
        level: Some("TRACE".into()),
        json: false,
    });
    assert!(out.contains("kerf trace line"), "{out}");
}

#[test]
fn the_default_level_is_info() {
    let out = written(TraceSettings::default());
    assert!(out.contains("kerf info line"), "{out}");
    assert!(!out.contains("kerf trace line"), "{out}");
}
