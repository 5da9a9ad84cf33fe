//! Legacy selector maps to v1 selector terms, AMI families to aliases, seconds to durations.

use std::collections::BTreeMap;

use crate::v1::{AmiSelectorTerm, SecurityGroupSelectorTerm, SubnetSelectorTerm};

/// Keys legacy selectors used for comma-separated ids.
const ID_KEYS: [&str; 2] = ["aws-ids", "aws::ids"];

/// A legacy selector split into ids and tag terms (comma-separated values are alternatives).
#[derive(Debug, Default, PartialEq)]
pub struct SplitSelector {
    /// Ids from `aws-ids` / `aws::ids`.
    pub ids: Vec<String>,
    /// Tag terms: the cartesian product of the alternatives of every key.
    pub tag_terms: Vec<BTreeMap<String, String>>,
    /// `aws::name` values.
    pub names: Vec<String>,
    /// `aws::owners` values.
    pub owners: Vec<String>,
}

fn split_list(value: &str) -> Vec<String> {
    value
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect()
}

/// Splits a legacy selector map.
pub fn split_selector(selector: &BTreeMap<String, String>) -> SplitSelector {
    let mut out = SplitSelector::default();
    let mut terms: Vec<BTreeMap<String, String>> = vec![BTreeMap::new()];
    let mut has_tags = false;
    for (key, value) in selector {
        match key.as_str() {
            k if ID_KEYS.contains(&k) => out.ids.extend(split_list(value)),
            "aws::name" => out.names.extend(split_list(value)),
            "aws::owners" => out.owners.extend(split_list(value)),
            _ => {
                has_tags = true;
                terms = product(terms, key, &split_list(value));
            }
        }
    }
    if has_tags {
        out.tag_terms = terms;
    }
    out
}

fn product(
    terms: Vec<BTreeMap<String, String>>,
    key: &str,
    values: &[String],
) -> Vec<BTreeMap<String, String>> {
    let values: Vec<String> = if values.is_empty() {
        vec!["*".to_string()]
    } else {
        values.to_vec()
    };
    let mut out = Vec::with_capacity(terms.len() * values.len());
    for term in terms {
        for value in &values {
            let mut t = term.clone();
            t.insert(key.to_string(), value.clone());
            out.push(t);
        }
    }
    out
}

/// `subnetSelector` → `subnetSelectorTerms`.
pub fn subnet_terms(selector: &BTreeMap<String, String>) -> Vec<SubnetSelectorTerm> {
    let split = split_selector(selector);
    let ids = split.ids.into_iter().map(|id| SubnetSelectorTerm {
        id: Some(id),
        ..SubnetSelectorTerm::default()
    });
    let tags = split.tag_terms.into_iter().map(|tags| SubnetSelectorTerm {
        tags,
        ..SubnetSelectorTerm::default()
    });
    ids.chain(tags).collect()
}

/// `securityGroupSelector` → `securityGroupSelectorTerms`.
pub fn security_group_terms(selector: &BTreeMap<String, String>) -> Vec<SecurityGroupSelectorTerm> {
    let split = split_selector(selector);
    let ids = split.ids.into_iter().map(|id| SecurityGroupSelectorTerm {
        id: Some(id),
        ..SecurityGroupSelectorTerm::default()
    });
    let names = split
        .names
        .into_iter()
        .map(|name| SecurityGroupSelectorTerm {
            name: Some(name),
            ..SecurityGroupSelectorTerm::default()
        });
    let tags = split
        .tag_terms
        .into_iter()
        .map(|tags| SecurityGroupSelectorTerm {
            tags,
            ..SecurityGroupSelectorTerm::default()
        });
    ids.chain(names).chain(tags).collect()
}

/// `amiSelector` → `amiSelectorTerms` (ids; otherwise name × owner × tag terms).
pub fn ami_terms(selector: &BTreeMap<String, String>) -> Vec<AmiSelectorTerm> {
    let split = split_selector(selector);
    let mut out: Vec<AmiSelectorTerm> = split.ids.iter().map(|id| ami_id(id)).collect();
    let names: Vec<Option<String>> = opt_list(&split.names);
    let owners: Vec<Option<String>> = opt_list(&split.owners);
    let tag_terms = if split.tag_terms.is_empty() {
        vec![BTreeMap::new()]
    } else {
        split.tag_terms
    };
    if split.names.is_empty() && split.owners.is_empty() && tag_terms[0].is_empty() {
        return out;
    }
    for name in &names {
        for owner in &owners {
            for tags in &tag_terms {
                out.push(AmiSelectorTerm {
                    name: name.clone(),
                    owner: owner.clone(),
                    tags: tags.clone(),
                    ..AmiSelectorTerm::default()
                });
            }
        }
    }
    out
}

fn ami_id(id: &str) -> AmiSelectorTerm {
    AmiSelectorTerm {
        id: Some(id.to_string()),
        ..AmiSelectorTerm::default()
    }
}

fn opt_list(values: &[String]) -> Vec<Option<String>> {
    if values.is_empty() {
        vec![None]
    } else {
        values.iter().cloned().map(Some).collect()
    }
}

/// The v1 alias for a legacy AMI family at `latest`, when v1 has one.
pub fn alias_for_family(family: &str) -> Option<String> {
    let prefix = match family {
        "AL2" => "al2",
        "AL2023" => "al2023",
        "Bottlerocket" => "bottlerocket",
        "Windows2019" => "windows2019",
        "Windows2022" => "windows2022",
        "Windows2025" => "windows2025",
        _ => return None,
    };
    Some(format!("{prefix}@latest"))
}

/// Seconds as a Karpenter duration: `1209600` → `336h`, `90` → `90s`.
pub fn seconds_to_duration(seconds: i64) -> String {
    match seconds {
        s if s > 0 && s % 3600 == 0 => format!("{}h", s / 3600),
        s if s > 0 && s % 60 == 0 => format!("{}m", s / 60),
        s => format!("{}s", s.max(0)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn seconds_become_the_largest_whole_unit() {
        assert_eq!(seconds_to_duration(1_209_600), "336h");
        assert_eq!(seconds_to_duration(1800), "30m");
        assert_eq!(seconds_to_duration(30), "30s");
        assert_eq!(seconds_to_duration(0), "0s");
    }

    #[test]
    fn comma_separated_tag_values_are_alternative_terms() {
        let terms = subnet_terms(&map(&[("Name", "a,b"), ("env", "x,y")]));
        assert_eq!(terms.len(), 4);
        assert!(terms.iter().all(|t| t.tags.len() == 2 && t.id.is_none()));
    }

    #[test]
    fn ami_selector_ids_names_and_owners() {
        let ids = ami_terms(&map(&[("aws::ids", "ami-1,ami-2")]));
        assert_eq!(ids.len(), 2);
        let named = ami_terms(&map(&[
            ("aws::name", "my-*"),
            ("aws::owners", "self,amazon"),
        ]));
        assert_eq!(named.len(), 2);
        assert_eq!(named[1].owner.as_deref(), Some("amazon"));
        assert!(ami_terms(&BTreeMap::new()).is_empty());
    }

    #[test]
    fn families_map_to_latest_aliases() {
        assert_eq!(alias_for_family("AL2023").as_deref(), Some("al2023@latest"));
        assert_eq!(alias_for_family("Ubuntu"), None);
    }
}
