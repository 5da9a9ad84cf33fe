//! The line of a field in the user's YAML: the document is walked along the field's path by
//! one untyped visitor (whatever kind the object is), which stops at the field by failing
//! there, so the YAML reader stamps the error with the field's position.

use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use std::fmt;

use super::path::{FieldPath, Segment};

/// The message the walk stops with at the field; any other error means the path is not in
/// the document.
const HERE: &str = "kerf: the field looked for";

/// The 1-based line of `path` in document `document` (1-based) of `text`.
pub fn of(text: &str, document: usize, path: &FieldPath) -> Option<usize> {
    let de = yaml_serde::Deserializer::from_str(text).nth(document.checked_sub(1)?)?;
    match (Walk { rest: &path.0 }).deserialize(de) {
        Err(e) if e.to_string().contains(HERE) => e.location().map(|l| l.line()),
        _ => None,
    }
}

/// Follows `rest` into the value it is given; fails at its end with [`HERE`], and ends
/// without error when the path leaves the document.
struct Walk<'p> {
    rest: &'p [Segment],
}

impl<'de> DeserializeSeed<'de> for Walk<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Walk<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any YAML value")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let Some((Segment::Key(want), rest)) = self.rest.split_first() else {
            return self.here();
        };
        while let Some(key) = map.next_key::<YamlKey>()? {
            if key.0.as_deref() == Some(want.as_str()) {
                return map.next_value_seed(Walk { rest });
            }
            map.next_value::<IgnoredAny>()?;
        }
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let Some((Segment::Index(want), rest)) = self.rest.split_first() else {
            return self.here();
        };
        for _ in 0..*want {
            if seq.next_element::<IgnoredAny>()?.is_none() {
                return Ok(());
            }
        }
        seq.next_element_seed(Walk { rest }).map(|_| ())
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<(), E> {
        self.here()
    }

    fn visit_i64<E: de::Error>(self, _: i64) -> Result<(), E> {
        self.here()
    }

    fn visit_u64<E: de::Error>(self, _: u64) -> Result<(), E> {
        self.here()
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<(), E> {
        self.here()
    }

    fn visit_str<E: de::Error>(self, _: &str) -> Result<(), E> {
        self.here()
    }

    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        self.here()
    }

    fn visit_none<E: de::Error>(self) -> Result<(), E> {
        self.here()
    }
}

impl Walk<'_> {
    /// At the field: stop, so the reader stamps its position. A path that goes on into a
    /// scalar is not in the document.
    fn here<E: de::Error>(&self) -> Result<(), E> {
        if self.rest.is_empty() {
            Err(E::custom(HERE))
        } else {
            Ok(())
        }
    }
}

/// A mapping key as text (`None` for a key that is not a string or a scalar).
struct YamlKey(Option<String>);

impl<'de> de::Deserialize<'de> for YamlKey {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(KeyVisitor)
    }
}

struct KeyVisitor;

impl<'de> Visitor<'de> for KeyVisitor {
    type Value = YamlKey;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a mapping key")
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<YamlKey, E> {
        Ok(YamlKey(Some(v.to_string())))
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<YamlKey, E> {
        Ok(YamlKey(Some(v.to_string())))
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<YamlKey, E> {
        Ok(YamlKey(Some(v.to_string())))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<YamlKey, E> {
        Ok(YamlKey(Some(v.to_string())))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<YamlKey, E> {
        Ok(YamlKey(Some(v.to_string())))
    }

    fn visit_unit<E: de::Error>(self) -> Result<YamlKey, E> {
        Ok(YamlKey(Some("null".into())))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<YamlKey, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(YamlKey(None))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<YamlKey, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(YamlKey(None))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::convert::path::Segment::{Index, Key};

    fn path(s: &[Segment]) -> FieldPath {
        FieldPath(s.to_vec())
    }

    const TEXT: &str = "a: 1\n---\nkind: Deployment\nspec:\n  replicas: three\n  template:\n    spec:\n      containers:\n      - name: a\n      - name: b\n        image: x\n";

    #[test]
    fn a_field_is_found_on_its_line_in_its_document() {
        let k = |s: &str| Key(s.into());
        assert_eq!(of(TEXT, 2, &path(&[k("spec"), k("replicas")])), Some(5));
        let image = [
            k("spec"),
            k("template"),
            k("spec"),
            k("containers"),
            Index(1),
            k("image"),
        ];
        assert_eq!(of(TEXT, 2, &path(&image)), Some(11));
        // An object's line is its first key's.
        assert_eq!(of(TEXT, 2, &path(&image[..5])), Some(10));
        assert_eq!(of(TEXT, 1, &path(&[k("a")])), Some(1));
    }

    #[test]
    fn a_path_the_document_does_not_have_has_no_line() {
        let k = |s: &str| Key(s.into());
        assert_eq!(of(TEXT, 2, &path(&[k("spec"), k("selector")])), None);
        assert_eq!(of(TEXT, 2, &path(&[k("spec"), Index(0)])), None);
        assert_eq!(of(TEXT, 2, &path(&[k("kind"), k("x")])), None);
        let past = [
            k("spec"),
            k("template"),
            k("spec"),
            k("containers"),
            Index(5),
        ];
        assert_eq!(of(TEXT, 2, &path(&past)), None);
        assert_eq!(of(TEXT, 3, &path(&[k("a")])), None);
        assert_eq!(of(TEXT, 0, &path(&[k("a")])), None);
    }
}
