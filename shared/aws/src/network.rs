//! Subnets and security groups from EC2NodeClass selector terms.
//!
//! Terms are ORed, the fields of one term ANDed. A tag value `"*"` means "the key exists".
//! For launching, one subnet per zone is kept: the one with the most free IP addresses,
//! among those the unavailable-offerings cache does not mark out of addresses.

use std::collections::BTreeMap;

use aws_sdk_ec2::types::Filter;
use jiff::Timestamp;
use kerf_catalog::unavailable::UnavailableOfferings;

use crate::error::{AwsError, from_sdk};

/// One `subnetSelectorTerms` / `securityGroupSelectorTerms` entry.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SelectorTerm {
    pub id: Option<String>,
    /// Security groups: the group name. Subnets: the `Name` tag.
    pub name: Option<String>,
    pub tags: BTreeMap<String, String>,
}

impl SelectorTerm {
    pub fn tags(pairs: &[(&str, &str)]) -> Self {
        let tags = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        SelectorTerm {
            tags,
            ..Default::default()
        }
    }

    pub fn id(id: &str) -> Self {
        SelectorTerm {
            id: Some(id.into()),
            ..Default::default()
        }
    }
}

/// A subnet the adapter may launch into.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Subnet {
    pub id: String,
    pub zone: String,
    pub zone_id: String,
    pub available_ips: i32,
}

/// A security group.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SecurityGroup {
    pub id: String,
    pub name: String,
}

fn filter(name: &str, value: &str) -> Filter {
    Filter::builder().name(name).values(value).build()
}

/// The tag filters of one term: `tag-key` for `"*"`, `tag:<k>` otherwise.
pub fn tag_filters(tags: &BTreeMap<String, String>) -> Vec<Filter> {
    tags.iter()
        .map(|(k, v)| {
            if v == "*" {
                filter("tag-key", k)
            } else {
                filter(&format!("tag:{k}"), v)
            }
        })
        .collect()
}

/// The EC2 filters of one term; `name_filter` is `group-name` or `tag:Name`.
pub fn term_filters(term: &SelectorTerm, id_filter: &str, name_filter: &str) -> Vec<Filter> {
    let mut f = tag_filters(&term.tags);
    if let Some(id) = &term.id {
        f.push(filter(id_filter, id));
    }
    if let Some(name) = &term.name {
        f.push(filter(name_filter, name));
    }
    f
}

fn check_terms(op: &'static str, terms: &[SelectorTerm]) -> Result<(), AwsError> {
    let empty = terms
        .iter()
        .any(|t| t.id.is_none() && t.name.is_none() && t.tags.is_empty());
    if terms.is_empty() || empty {
        return Err(AwsError::invalid(op, "selector terms must be non-empty"));
    }
    Ok(())
}

/// All subnets matching any term, deduplicated, ordered by id.
pub async fn subnets(
    ec2: &aws_sdk_ec2::Client,
    terms: &[SelectorTerm],
) -> Result<Vec<Subnet>, AwsError> {
    check_terms("DescribeSubnets", terms)?;
    let mut found = BTreeMap::new();
    for term in terms {
        let mut pages = ec2
            .describe_subnets()
            .set_filters(Some(term_filters(term, "subnet-id", "tag:Name")))
            .into_paginator()
            .send();
        while let Some(page) = pages.next().await {
            let page = page.map_err(|e| from_sdk("DescribeSubnets", e))?;
            for s in page.subnets() {
                if let Some(sub) = to_subnet(s) {
                    found.insert(sub.id.clone(), sub);
                }
            }
        }
    }
    Ok(found.into_values().collect())
}

fn to_subnet(s: &aws_sdk_ec2::types::Subnet) -> Option<Subnet> {
    Some(Subnet {
        id: s.subnet_id()?.to_string(),
        zone: s.availability_zone()?.to_string(),
        zone_id: s.availability_zone_id().unwrap_or_default().to_string(),
        available_ips: s.available_ip_address_count().unwrap_or(0),
    })
}

/// One subnet per zone: the most free IPs, ties broken by the smaller id.
pub fn zonal_subnets(subnets: &[Subnet]) -> BTreeMap<String, Subnet> {
    let mut by_zone: BTreeMap<String, Subnet> = BTreeMap::new();
    for s in subnets {
        let better = by_zone.get(&s.zone).is_none_or(|cur| {
            s.available_ips > cur.available_ips
                || (s.available_ips == cur.available_ips && s.id < cur.id)
        });
        if better {
            by_zone.insert(s.zone.clone(), s.clone());
        }
    }
    by_zone
}

/// [`zonal_subnets`] over the subnets the unavailable-offerings cache does not mark out of
/// free addresses at `now`; a zone whose subnets are all full is left out, so its offerings
/// are not launched (pass the zones of the result to discovery as the subnet zones).
pub fn usable_zonal_subnets(
    subnets: &[Subnet],
    cache: &UnavailableOfferings,
    now: Timestamp,
) -> BTreeMap<String, Subnet> {
    let usable: Vec<Subnet> = subnets
        .iter()
        .filter(|s| !cache.is_subnet_unavailable(&s.id, now))
        .cloned()
        .collect();
    zonal_subnets(&usable)
}

/// All security groups matching any term, deduplicated, ordered by id.
pub async fn security_groups(
    ec2: &aws_sdk_ec2::Client,
    terms: &[SelectorTerm],
) -> Result<Vec<SecurityGroup>, AwsError> {
    check_terms("DescribeSecurityGroups", terms)?;
    let mut found = BTreeMap::new();
    for term in terms {
        let mut pages = ec2
            .describe_security_groups()
            .set_filters(Some(term_filters(term, "group-id", "group-name")))
            .into_paginator()
            .send();
        while let Some(page) = pages.next().await {
            let page = page.map_err(|e| from_sdk("DescribeSecurityGroups", e))?;
            for g in page.security_groups() {
                if let Some(id) = g.group_id() {
                    let name = g.group_name().unwrap_or_default().to_string();
                    found.insert(
                        id.to_string(),
                        SecurityGroup {
                            id: id.to_string(),
                            name,
                        },
                    );
                }
            }
        }
    }
    Ok(found.into_values().collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sub(id: &str, zone: &str, ips: i32) -> Subnet {
        Subnet {
            id: id.into(),
            zone: zone.into(),
            zone_id: String::new(),
            available_ips: ips,
        }
    }

    #[test]
    fn picks_most_free_ips_per_zone() {
        let subs = [
            sub("s-1", "a", 10),
            sub("s-2", "a", 50),
            sub("s-3", "b", 5),
            sub("s-0", "b", 5),
        ];
        let z = zonal_subnets(&subs);
        assert_eq!(z["a"].id, "s-2");
        assert_eq!(z["b"].id, "s-0");
    }

    #[test]
    fn full_subnets_are_skipped_and_a_zone_without_any_is_dropped() {
        let subs = [sub("s-1", "a", 50), sub("s-2", "a", 10), sub("s-3", "b", 5)];
        let now: Timestamp = "2025-01-01T00:00:00Z".parse().unwrap();
        let mut cache = UnavailableOfferings::default();
        cache.mark_subnet("s-1", now);
        cache.mark_subnet("s-3", now);
        let z = usable_zonal_subnets(&subs, &cache, now);
        assert_eq!(z.keys().collect::<Vec<_>>(), vec!["a"]);
        assert_eq!(z["a"].id, "s-2");
        let later = now + kerf_catalog::unavailable::UNAVAILABLE_TTL;
        assert_eq!(usable_zonal_subnets(&subs, &cache, later)["a"].id, "s-1");
    }

    #[test]
    fn wildcard_tag_means_exists() {
        let term = SelectorTerm::tags(&[("karpenter.sh/discovery", "*"), ("env", "prod")]);
        let f = term_filters(&term, "subnet-id", "tag:Name");
        let names: Vec<_> = f
            .iter()
            .map(|f| f.name().unwrap_or_default().to_string())
            .collect();
        assert_eq!(names, vec!["tag:env", "tag-key"]);
        assert_eq!(f[1].values(), ["karpenter.sh/discovery"]);
    }
}
