//! The fast reader's contract, checked by its tests and by fuzzing: whatever it reads, it
//! reads as the full YAML reader does (the same documents with the same numbers and values),
//! and it reads nothing the full reader refuses.

use serde::Deserialize;
use serde_json::Value;

use super::documents;

/// Which reader a text is left to.
#[derive(Debug, PartialEq, Eq)]
pub enum Reader {
    Fast,
    Full,
}

/// The full reader's non-null documents with their numbers, or `None` on an error.
pub fn full(text: &str) -> Option<Vec<(usize, Value)>> {
    let mut out = Vec::new();
    for (i, de) in yaml_serde::Deserializer::from_str(text).enumerate() {
        let v = Value::deserialize(de).ok()?;
        if !v.is_null() {
            out.push((i + 1, v));
        }
    }
    Some(out)
}

/// Which reader reads `text`, or how the fast one breaks the contract on it.
pub fn contract(text: &str) -> Result<Reader, String> {
    let Some(fast) = documents(text) else {
        return Ok(Reader::Full);
    };
    let mut read = Vec::new();
    for d in fast {
        let v: Value =
            serde_json::from_str(&d.json).map_err(|e| format!("invalid JSON ({e}): {}", d.json))?;
        read.push((d.number, v));
    }
    let Some(full) = full(text) else {
        return Err("read what the full reader refuses".into());
    };
    if read != full {
        let first = read.iter().zip(&full).position(|(a, b)| a != b);
        let shown = |v: &[(usize, Value)]| first.and_then(|i| v.get(i)).map(|d| d.1.to_string());
        return Err(format!(
            "document {first:?} differs:\n fast {:?}\n full {:?}\n ({} and {} documents)",
            shown(&read),
            shown(&full),
            read.len(),
            full.len()
        ));
    }
    Ok(Reader::Fast)
}
