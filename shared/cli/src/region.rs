//! Which region `kerf plan` plans for: `--region` when given, else the region the input's
//! Nodes and NodeClaims carry in `topology.kubernetes.io/region`, else `us-west-2`. Anything
//! but an explicit `--region` is said on stderr, so a plan is never silently for the wrong
//! region.

use std::collections::BTreeSet;

use serde::Deserialize;

use crate::error::CliError;
use crate::input::{Body, Doc};

/// The region assumed when neither `--region` nor the input names one.
pub const DEFAULT: &str = "us-west-2";

/// The region chosen, and what to tell the user about the choice.
#[derive(Debug, PartialEq)]
pub struct Chosen {
    pub region: String,
    pub note: Option<String>,
}

#[derive(Deserialize)]
struct Labelled {
    #[serde(default)]
    metadata: Meta,
}

#[derive(Default, Deserialize)]
struct Meta {
    #[serde(default)]
    labels: std::collections::BTreeMap<String, String>,
}

/// The regions the input's Nodes and NodeClaims are labelled with.
fn named_by(docs: &[Doc]) -> BTreeSet<String> {
    docs.iter()
        .filter(|d| matches!(d.kind(), "Node" | "NodeClaim"))
        .filter_map(|d| {
            let Body::Json(raw) = &d.body;
            let l: Labelled = serde_json::from_str(raw).ok()?;
            l.metadata.labels.get(kerf_labels::REGION).cloned()
        })
        .collect()
}

/// Chooses the region for the bundled catalog.
pub fn choose(explicit: Option<&str>, docs: &[Doc]) -> Result<Chosen, CliError> {
    if let Some(r) = explicit {
        return Ok(Chosen {
            region: r.to_string(),
            note: None,
        });
    }
    let named = named_by(docs);
    let mut it = named.iter();
    match (it.next(), it.next()) {
        (Some(r), None) => Ok(Chosen {
            region: r.clone(),
            note: Some(format!(
                "planning for region {r}, named by the input's nodes \
                 (topology.kubernetes.io/region); --region to choose another"
            )),
        }),
        (Some(_), Some(_)) => Err(CliError::Usage(format!(
            "the input's nodes are in several regions ({}); pass --region",
            named.into_iter().collect::<Vec<_>>().join(", ")
        ))),
        (None, _) => Ok(Chosen {
            region: DEFAULT.to_string(),
            note: Some(format!(
                "planning for region {DEFAULT} (assumed: no --region, and no node in the \
                 input names one); --region to choose another"
            )),
        }),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::input::{Inputs, parse_into};

    fn docs(yaml: &str) -> Vec<Doc> {
        let mut i = Inputs::default();
        parse_into(&mut i, "in.yaml", yaml).unwrap();
        i.docs
    }

    const NODE_EU: &str = "apiVersion: v1\nkind: Node\nmetadata:\n  name: a\n  labels:\n    \
                           topology.kubernetes.io/region: eu-central-1\n";
    const NODE_US: &str = "apiVersion: v1\nkind: Node\nmetadata:\n  name: b\n  labels:\n    \
                           topology.kubernetes.io/region: us-east-1\n";

    #[test]
    fn an_explicit_region_wins_and_is_not_remarked() {
        let c = choose(Some("sa-east-1"), &docs(NODE_EU)).unwrap();
        assert_eq!(c.region, "sa-east-1");
        assert_eq!(c.note, None);
    }

    #[test]
    fn the_nodes_region_is_taken_and_said() {
        let c = choose(None, &docs(NODE_EU)).unwrap();
        assert_eq!(c.region, "eu-central-1");
        assert!(c.note.unwrap().contains("named by the input's nodes"));
    }

    #[test]
    fn without_nodes_the_default_is_assumed_and_said() {
        let c = choose(
            None,
            &docs("apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n"),
        )
        .unwrap();
        assert_eq!(c.region, DEFAULT);
        assert!(c.note.unwrap().contains("assumed"));
    }

    #[test]
    fn nodes_in_two_regions_ask_for_one() {
        let e = choose(None, &docs(&format!("{NODE_EU}---\n{NODE_US}"))).unwrap_err();
        assert!(e.to_string().contains("eu-central-1, us-east-1"), "{e}");
        assert_eq!(e.exit_code(), 2);
    }
}
