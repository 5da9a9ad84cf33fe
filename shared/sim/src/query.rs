//! Lenient query-string parsing (`?&a=b`, bare `?`, form-urlencoded values).

use crate::error::ApiError;
use crate::registry::ResourceInfo;
use crate::selector::{FieldSelector, LabelSelector};
use serde_json::Value;

/// The query parameters the server understands.
#[derive(Debug, Default, Clone)]
pub struct Query {
    /// `labelSelector`.
    pub label_selector: Option<String>,
    /// `fieldSelector`.
    pub field_selector: Option<String>,
    /// `limit` (0 = unlimited).
    pub limit: usize,
    /// `continue`.
    pub continue_token: Option<String>,
    /// `watch=true|1`.
    pub watch: bool,
    /// `resourceVersion`.
    pub resource_version: Option<String>,
    /// `timeoutSeconds`.
    pub timeout_seconds: Option<u64>,
    /// `allowWatchBookmarks`.
    pub bookmarks: bool,
    /// `fieldManager`.
    pub field_manager: Option<String>,
    /// `force=true` (apply only).
    pub force: bool,
    /// `dryRun=All`.
    pub dry_run: bool,
    /// `fieldValidation=Strict`: a written object's unknown fields are refused (400).
    pub strict: bool,
    /// `includeObject` of a Table.
    pub include_object: crate::table::Include,
}

fn decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < bytes.len() => {
                let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).unwrap_or("");
                match u8::from_str_radix(hex, 16) {
                    Ok(b) => {
                        out.push(b);
                        i += 2;
                    }
                    Err(_) => out.push(b'%'),
                }
            }
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn truthy(v: &str) -> bool {
    matches!(v, "true" | "1" | "True")
}

impl Query {
    /// Parses a raw query string.
    pub fn parse(raw: Option<&str>) -> Self {
        let mut q = Self::default();
        for pair in raw.unwrap_or_default().split('&').filter(|p| !p.is_empty()) {
            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
            let v = decode(v);
            match k {
                "labelSelector" => q.label_selector = Some(v),
                "fieldSelector" => q.field_selector = Some(v),
                "limit" => q.limit = v.parse().unwrap_or(0),
                "continue" => q.continue_token = Some(v).filter(|s| !s.is_empty()),
                "watch" => q.watch = truthy(&v),
                "resourceVersion" => q.resource_version = Some(v).filter(|s| !s.is_empty()),
                "timeoutSeconds" => q.timeout_seconds = v.parse().ok(),
                "allowWatchBookmarks" => q.bookmarks = truthy(&v),
                "fieldManager" => q.field_manager = Some(v),
                "force" => q.force = truthy(&v),
                "dryRun" => q.dry_run = v == "All",
                "fieldValidation" => q.strict = v == "Strict",
                "includeObject" => q.include_object = crate::table::Include::parse(&v),
                _ => {}
            }
        }
        q
    }

    /// The parsed label and field selectors (400 if malformed or unsupported).
    pub fn selectors(&self, res: &ResourceInfo) -> Result<Selectors, ApiError> {
        let labels = LabelSelector::parse(self.label_selector.as_deref().unwrap_or_default())?;
        let fields = FieldSelector::parse(
            self.field_selector.as_deref().unwrap_or_default(),
            res.fields,
            res.namespaced,
        )?;
        Ok(Selectors { labels, fields })
    }
}

/// Label plus field selector.
#[derive(Debug, Clone, Default)]
pub struct Selectors {
    labels: LabelSelector,
    fields: FieldSelector,
}

impl Selectors {
    /// Whether an object matches both.
    pub fn matches(&self, obj: &Value) -> bool {
        self.labels.matches(obj) && self.fields.matches(obj)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lenient() {
        let q = Query::parse(Some("&labelSelector=a%3Db%2C%21c&limit=10&watch=true&x"));
        assert_eq!(q.label_selector.as_deref(), Some("a=b,!c"));
        assert_eq!(q.limit, 10);
        assert!(q.watch);
        assert_eq!(decode("100%"), "100%");
    }
}
