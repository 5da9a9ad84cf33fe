//! AMI resolution from `amiSelectorTerms`: aliases (`al2023@latest`, `bottlerocket@v1.20.0`,
//! `al2@v20240807`) through SSM public parameters for the cluster's Kubernetes version and each
//! architecture/variant, or id / name / owner / tag terms through `DescribeImages`.
//! Per requirement set (arch + variant) the newest image wins.

use std::collections::BTreeMap;

use aws_sdk_ec2::types::{Filter, Image};

use crate::error::{AwsError, from_sdk};
use crate::network::tag_filters;

mod alias;

pub use alias::{Alias, AliasParameter, DEFAULT_SSM_ROOT, Variant, alias_parameters};

/// One non-alias `amiSelectorTerms` entry (fields ANDed).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ImageTerm {
    pub id: Option<String>,
    pub name: Option<String>,
    pub owner: Option<String>,
    pub tags: BTreeMap<String, String>,
}

/// A resolved AMI.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResolvedAmi {
    pub id: String,
    pub name: String,
    /// `x86_64` or `arm64`.
    pub arch: String,
    /// Set for alias-resolved images.
    pub variant: Option<Variant>,
    pub creation_date: String,
    pub deprecated: bool,
}

/// Reads the alias parameters that exist (missing variants are skipped) and describes them.
pub async fn resolve_alias(
    ssm: &aws_sdk_ssm::Client,
    ec2: &aws_sdk_ec2::Client,
    alias: &Alias,
    k8s: &str,
    root: &str,
) -> Result<Vec<ResolvedAmi>, AwsError> {
    let params = alias_parameters(alias, k8s, root)?;
    let mut found: Vec<(String, &'static str, Variant)> = Vec::new();
    for chunk in params.chunks(10) {
        let out = ssm
            .get_parameters()
            .set_names(Some(chunk.iter().map(|p| p.name.clone()).collect()))
            .send()
            .await
            .map_err(|e| from_sdk("GetParameters", e))?;
        for p in out.parameters() {
            let param = chunk.iter().find(|c| Some(c.name.as_str()) == p.name());
            if let (Some(c), Some(v)) = (param, p.value()) {
                found.push((v.to_string(), c.arch, c.variant));
            }
        }
    }
    if found.is_empty() {
        return Err(AwsError::NotFound(crate::error::ErrorInfo {
            operation: "GetParameters",
            code: "ParameterNotFound".into(),
            message: format!(
                "no AMI parameter for {}@{} on {k8s}",
                alias.family, alias.version
            ),
        }));
    }
    let mut ids: Vec<String> = found.iter().map(|f| f.0.clone()).collect();
    ids.sort();
    ids.dedup();
    let filter = Filter::builder()
        .name("image-id")
        .set_values(Some(ids))
        .build();
    let images: BTreeMap<String, ResolvedAmi> = describe(ec2, vec![filter], None)
        .await?
        .iter()
        .filter_map(to_resolved)
        .map(|r| (r.id.clone(), r))
        .collect();
    let mut out: Vec<ResolvedAmi> = found
        .into_iter()
        .filter_map(|(id, arch, variant)| {
            let img = images.get(&id)?;
            Some(ResolvedAmi {
                arch: arch.to_string(),
                variant: Some(variant),
                ..img.clone()
            })
        })
        .collect();
    sort_newest_first(&mut out);
    Ok(out)
}

fn to_resolved(img: &Image) -> Option<ResolvedAmi> {
    Some(ResolvedAmi {
        id: img.image_id()?.to_string(),
        name: img.name().unwrap_or_default().to_string(),
        arch: img
            .architecture()
            .map(|a| a.as_str().to_string())
            .unwrap_or_default(),
        variant: None,
        creation_date: img.creation_date().unwrap_or_default().to_string(),
        deprecated: img.deprecation_time().is_some(),
    })
}

async fn describe(
    ec2: &aws_sdk_ec2::Client,
    filters: Vec<Filter>,
    owner: Option<&str>,
) -> Result<Vec<Image>, AwsError> {
    let mut call = ec2
        .describe_images()
        .set_filters(Some(filters))
        .include_deprecated(true);
    if let Some(o) = owner {
        call = call.owners(o);
    }
    let out = call
        .send()
        .await
        .map_err(|e| from_sdk("DescribeImages", e))?;
    Ok(out.images().to_vec())
}

fn term_filters(t: &ImageTerm) -> Vec<Filter> {
    let mut f = tag_filters(&t.tags);
    let mut add = |name: &str, v: &Option<String>| {
        if let Some(v) = v {
            f.push(Filter::builder().name(name).values(v).build());
        }
    };
    add("image-id", &t.id);
    add("name", &t.name);
    f.push(Filter::builder().name("state").values("available").build());
    f
}

/// The AMI ids `amiSelectorTerms[].ssmParameter` names hold (names or ARNs), in order.
pub async fn ids_from_parameters(
    ssm: &aws_sdk_ssm::Client,
    names: &[String],
) -> Result<Vec<String>, AwsError> {
    let mut ids = Vec::new();
    for chunk in names.chunks(10) {
        let out = ssm
            .get_parameters()
            .set_names(Some(chunk.to_vec()))
            .send()
            .await
            .map_err(|e| from_sdk("GetParameters", e))?;
        if let Some(missing) = out.invalid_parameters().first() {
            return Err(AwsError::invalid(
                "GetParameters",
                format!("spec.amiSelectorTerms[].ssmParameter {missing:?} does not exist"),
            ));
        }
        for p in out.parameters() {
            let value = p.value().unwrap_or_default();
            if !value.starts_with("ami-") {
                return Err(AwsError::invalid(
                    "GetParameters",
                    format!(
                        "spec.amiSelectorTerms[].ssmParameter {:?} holds {value:?}, not an AMI id",
                        p.name().unwrap_or_default()
                    ),
                ));
            }
            ids.push(value.to_string());
        }
    }
    Ok(ids)
}

/// Resolves id/name/owner/tag terms (ORed): newest image per architecture, newest first.
pub async fn resolve_terms(
    ec2: &aws_sdk_ec2::Client,
    terms: &[ImageTerm],
) -> Result<Vec<ResolvedAmi>, AwsError> {
    let mut all = Vec::new();
    for t in terms {
        let images = describe(ec2, term_filters(t), t.owner.as_deref()).await?;
        all.extend(images.iter().filter_map(to_resolved));
    }
    Ok(newest_per_arch(all))
}

/// Keeps one image per (arch, variant): non-deprecated first, then newest, then name.
pub fn newest_per_arch(mut images: Vec<ResolvedAmi>) -> Vec<ResolvedAmi> {
    sort_newest_first(&mut images);
    let mut seen = Vec::new();
    images.retain(|i| {
        let key = (i.arch.clone(), i.variant);
        let fresh = !seen.contains(&key);
        seen.push(key);
        fresh
    });
    images
}

fn sort_newest_first(images: &mut [ResolvedAmi]) {
    images.sort_by(|a, b| {
        a.deprecated
            .cmp(&b.deprecated)
            .then_with(|| b.creation_date.cmp(&a.creation_date))
            .then_with(|| b.name.cmp(&a.name))
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn newest_wins_per_arch() {
        let img = |id: &str, arch: &str, date: &str, dep: bool| ResolvedAmi {
            id: id.into(),
            name: id.into(),
            arch: arch.into(),
            variant: None,
            creation_date: date.into(),
            deprecated: dep,
        };
        let out = newest_per_arch(vec![
            img("old", "x86_64", "2024-01-01T00:00:00.000Z", false),
            img("new", "x86_64", "2025-01-01T00:00:00.000Z", false),
            img(
                "newer-deprecated",
                "x86_64",
                "2026-01-01T00:00:00.000Z",
                true,
            ),
            img("arm", "arm64", "2023-01-01T00:00:00.000Z", false),
        ]);
        let ids: Vec<_> = out.iter().map(|i| i.id.as_str()).collect();
        assert_eq!(ids, vec!["new", "arm"]);
    }
}
