//! The functions' JSON log lines kept in memory (the tests read them) and, when asked,
//! appended to a file as they are written (`kerf sim --logs FILE`), so the `jq` habits of
//! Karpenter's logs work on Kerf's.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;
use std::sync::{Arc, Mutex};

use kerf_control::log::{LogSink, MemorySink};

use super::WorldError;

/// Memory, and a file beside it.
pub struct Tee {
    memory: Arc<MemorySink>,
    file: Mutex<BufWriter<File>>,
}

impl Tee {
    /// Creates (or truncates) `path`.
    pub fn create(path: &Path, memory: Arc<MemorySink>) -> Result<Tee, WorldError> {
        let f = File::create(path).map_err(|e| WorldError::LogFile {
            path: path.display().to_string(),
            message: e.to_string(),
        })?;
        Ok(Tee {
            memory,
            file: Mutex::new(BufWriter::new(f)),
        })
    }
}

impl LogSink for Tee {
    fn write(&self, line: &str) {
        self.memory.write(line);
        // A log line that cannot be written is lost, not the run: the memory copy stays.
        if let Ok(mut f) = self.file.lock() {
            let _ = writeln!(f, "{line}").and_then(|()| f.flush());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_line_reaches_memory_and_the_file() {
        let dir = std::env::temp_dir().join(format!("kerf-tee-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("kerf.log");
        let memory = Arc::new(MemorySink::default());
        let tee = Tee::create(&path, memory.clone()).unwrap();
        tee.write(r#"{"message":"a"}"#);
        tee.write(r#"{"message":"b"}"#);
        assert_eq!(memory.lines().len(), 2);
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(text, "{\"message\":\"a\"}\n{\"message\":\"b\"}\n");
        let err = Tee::create(&dir.join("no/such/dir/kerf.log"), memory)
            .err()
            .unwrap();
        assert!(
            err.to_string().contains("cannot write the log file"),
            "{err}"
        );
        assert!(err.to_string().contains("no/such/dir/kerf.log"), "{err}");
    }
}
