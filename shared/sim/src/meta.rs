//! Object metadata helpers: uids, timestamps, generateName, and field access.

use serde_json::Value;
use std::sync::atomic::{AtomicU64, Ordering};

static COUNTER: AtomicU64 = AtomicU64::new(0);

/// A SplitMix64 step: cheap, well-mixed, good enough for names and uids.
fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

fn random() -> u64 {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or_default();
    mix(nanos ^ mix(COUNTER.fetch_add(1, Ordering::Relaxed)))
}

/// A random RFC 4122 version-4 style uid.
pub fn uid() -> String {
    format_uid(random(), random())
}

/// A uid drawn from `seed` (the store's resource version), so a run that writes the same
/// objects in the same order gets the same uids.
pub fn uid_from(seed: u64) -> String {
    format_uid(mix(seed), mix(mix(seed)))
}

fn format_uid(a: u64, b: u64) -> String {
    format!(
        "{:08x}-{:04x}-4{:03x}-{:04x}-{:012x}",
        a >> 32,
        (a >> 16) & 0xffff,
        a & 0xfff,
        0x8000 | (b >> 48 & 0x3fff),
        b & 0xffff_ffff_ffff
    )
}

/// `generateName` plus 5 characters from the apiserver's alphabet, prefix cut to 58, drawn
/// from `seed` (the store's resource version and the attempt): the same writes in the same
/// order give the same names, so `kerf sim` runs are reproducible.
pub fn generate_name(prefix: &str, seed: u64) -> String {
    const ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
    let prefix: String = prefix.chars().take(58).collect();
    let mut r = mix(seed
        ^ mix(prefix
            .bytes()
            .fold(0u64, |h, b| h.wrapping_mul(31).wrapping_add(u64::from(b)))));
    let mut out = prefix;
    for _ in 0..5 {
        out.push(ALPHABET[(r % ALPHABET.len() as u64) as usize] as char);
        r /= ALPHABET.len() as u64;
    }
    out
}

/// Now, RFC 3339 with seconds precision (`2026-01-02T03:04:05Z`).
pub fn now() -> String {
    jiff::Timestamp::now()
        .strftime("%Y-%m-%dT%H:%M:%SZ")
        .to_string()
}

/// `metadata.<field>` as a string, or "".
pub fn meta_str<'a>(obj: &'a Value, field: &str) -> &'a str {
    obj["metadata"][field].as_str().unwrap_or_default()
}

/// `metadata.finalizers` as strings.
pub fn finalizers(obj: &Value) -> Vec<String> {
    obj["metadata"]["finalizers"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|v| v.as_str().map(str::to_string))
        .collect()
}

/// Whether `metadata.deletionTimestamp` is set.
pub fn deleting(obj: &Value) -> bool {
    !obj["metadata"]["deletionTimestamp"].is_null()
}

/// Removes `metadata.<field>` if present.
pub fn meta_remove(obj: &mut Value, field: &str) {
    if let Some(m) = obj.get_mut("metadata").and_then(Value::as_object_mut) {
        m.remove(field);
    }
}

/// Whether any top-level key other than metadata/status/apiVersion/kind differs.
pub fn spec_changed(old: &Value, new: &Value) -> bool {
    let strip = |v: &Value| -> Value {
        let mut v = v.clone();
        if let Some(m) = v.as_object_mut() {
            for k in ["metadata", "status", "apiVersion", "kind"] {
                m.remove(k);
            }
        }
        v
    };
    strip(old) != strip(new)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_uids() {
        let n = generate_name("default-", 7);
        assert_eq!(n.len(), 13);
        assert!(n.starts_with("default-"));
        assert_eq!(
            n,
            generate_name("default-", 7),
            "the same seed, the same name"
        );
        assert_ne!(n, generate_name("default-", 8));
        assert_ne!(
            n[8..],
            generate_name("inflate-", 7)[8..],
            "the prefix counts"
        );
        assert_eq!(uid().len(), 36);
        assert_ne!(uid(), uid());
        assert_eq!(uid_from(3), uid_from(3));
        assert_ne!(uid_from(3), uid_from(4));
        assert_eq!(uid_from(3).len(), 36);
        assert_eq!(now().len(), 20);
    }
}
