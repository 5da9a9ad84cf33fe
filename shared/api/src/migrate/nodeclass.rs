//! AWSNodeTemplate (and inline `provider`) and v1beta1 EC2NodeClass → v1 EC2NodeClass.

use kube_core::ObjectMeta;

use super::Ctx;
use super::selectors::{alias_for_family, ami_terms, security_group_terms, subnet_terms};
use crate::legacy::v1alpha1::{AWSNodeTemplate, AWSNodeTemplateSpec};
use crate::legacy::{LegacyMeta, LegacyMetadataOptions, Other, v1beta1};
use crate::v1::{
    AmiFamily, AmiSelectorTerm, EC2NodeClass, EC2NodeClassSpec, InstanceStorePolicy,
    MetadataOptions,
};

/// Canonical's AWS account, owner of the Ubuntu EKS AMIs.
const CANONICAL_OWNER: &str = "099720109477";

/// The IMDS hop limit legacy Karpenter used where v1 uses 1.
const LEGACY_HOP_LIMIT: i64 = 2;

/// Legacy `metadataOptions` with unset fields filled from `defaults`.
fn fill_metadata_options(m: LegacyMetadataOptions, defaults: MetadataOptions) -> MetadataOptions {
    MetadataOptions {
        http_endpoint: m.http_endpoint.or(defaults.http_endpoint),
        http_protocol_ipv6: m.http_protocol_ipv6.or(defaults.http_protocol_ipv6),
        http_put_response_hop_limit: m
            .http_put_response_hop_limit
            .or(defaults.http_put_response_hop_limit),
        http_tokens: m.http_tokens.or(defaults.http_tokens),
    }
}

/// v1alpha1 (and inline provider) `metadataOptions`. Unset, Karpenter launched with its own
/// defaults (hop limit 2); set, it passed only the given fields, leaving the rest to EC2's
/// defaults (hop limit 1, tokens as the AMI says), so those are written out explicitly.
fn v1alpha1_metadata_options(
    given: Option<LegacyMetadataOptions>,
    ctx: &mut Ctx,
    object: &str,
    prefix: &str,
) -> MetadataOptions {
    let Some(m) = given else {
        return MetadataOptions {
            http_put_response_hop_limit: Some(LEGACY_HOP_LIMIT),
            ..MetadataOptions::default()
        };
    };
    if m.http_tokens.is_none() {
        ctx.warn(object, format!("{prefix}.metadataOptions.httpTokens was unset, leaving IMDSv2 to the AMI's default; v1 requires it (httpTokens: required): set httpTokens: optional to keep IMDSv1"));
    }
    fill_metadata_options(m, MetadataOptions::default())
}

/// v1beta1 `metadataOptions`: the CRD defaulted every unset field, the hop limit to 2.
fn v1beta1_metadata_options(given: Option<LegacyMetadataOptions>) -> MetadataOptions {
    let defaults = MetadataOptions {
        http_put_response_hop_limit: Some(LEGACY_HOP_LIMIT),
        ..MetadataOptions::default()
    };
    fill_metadata_options(given.unwrap_or_default(), defaults)
}

/// Metadata of a migrated object: name, labels and annotations.
pub(super) fn v1_meta(meta: &LegacyMeta) -> ObjectMeta {
    ObjectMeta {
        name: Some(meta.name.clone()),
        labels: (!meta.labels.is_empty()).then(|| meta.labels.clone()),
        annotations: (!meta.annotations.is_empty()).then(|| meta.annotations.clone()),
        ..ObjectMeta::default()
    }
}

/// Warns about each field of `other`, skipping `ignore`.
pub(super) fn warn_other(
    ctx: &mut Ctx,
    object: &str,
    prefix: &str,
    other: &Other,
    ignore: &[&str],
) {
    for key in other.keys().filter(|k| !ignore.contains(&k.as_str())) {
        ctx.warn(
            object,
            format!("{prefix}.{key} has no v1 equivalent; dropped"),
        );
    }
}

/// AWSNodeTemplate → EC2NodeClass of the same name.
pub(super) fn from_node_template(template: AWSNodeTemplate, ctx: &mut Ctx) -> EC2NodeClass {
    let object = format!("AWSNodeTemplate/{}", template.metadata.name);
    let mut class = from_provider(&template.metadata.name, template.spec, ctx, &object, "spec");
    class.metadata = v1_meta(&template.metadata);
    class
}

/// The role a migrated EC2NodeClass gets when the legacy one named none (it came from global
/// settings Kerf cannot see): a name no account has, so the class applies and says plainly
/// what to fill in.
pub(super) const PLACEHOLDER_ROLE: &str = "REPLACE-ME-with-your-KarpenterNodeRole";

/// An AWSNodeTemplate spec (or inline provider) → EC2NodeClass `name`.
pub(super) fn from_provider(
    name: &str,
    spec: AWSNodeTemplateSpec,
    ctx: &mut Ctx,
    object: &str,
    prefix: &str,
) -> EC2NodeClass {
    let (ami_selector_terms, ami_family) = legacy_amis(&spec, ctx, object, prefix);
    let role = spec.instance_profile.is_none().then(|| {
        ctx.warn(object, format!("{prefix}.instanceProfile is unset (the legacy default came from global settings): EC2NodeClass/{name} has spec.role {PLACEHOLDER_ROLE}; replace it with your node role's name (or set spec.instanceProfile) before nodes can launch"));
        PLACEHOLDER_ROLE.to_string()
    });
    if let Some(lt) = &spec.launch_template {
        ctx.warn(object, format!("{prefix}.launchTemplate ({lt}) has no v1 equivalent: move its AMI, user data and block devices into EC2NodeClass/{name}; dropped"));
    }
    warn_other(ctx, object, prefix, &spec.other, &["apiVersion", "kind"]);
    let subnet_selector_terms = subnet_terms(&spec.subnet_selector);
    let security_group_selector_terms = security_group_terms(&spec.security_group_selector);
    warn_empty(
        ctx,
        object,
        prefix,
        "subnetSelector",
        subnet_selector_terms.is_empty(),
    );
    warn_empty(
        ctx,
        object,
        prefix,
        "securityGroupSelector",
        security_group_selector_terms.is_empty(),
    );
    let class_spec = EC2NodeClassSpec {
        subnet_selector_terms,
        security_group_selector_terms,
        ami_selector_terms,
        ami_family,
        user_data: spec.user_data,
        role,
        instance_profile: spec.instance_profile,
        tags: spec.tags,
        block_device_mappings: spec.block_device_mappings,
        detailed_monitoring: spec.detailed_monitoring,
        metadata_options: Some(v1alpha1_metadata_options(
            spec.metadata_options,
            ctx,
            object,
            prefix,
        )),
        context: spec.context,
        ..EC2NodeClassSpec::default()
    };
    EC2NodeClass::new(name, class_spec)
}

fn warn_empty(ctx: &mut Ctx, object: &str, prefix: &str, field: &str, empty: bool) {
    if empty {
        ctx.warn(
            object,
            format!("{prefix}.{field} is empty; v1 requires at least one selector term"),
        );
    }
}

/// amiSelector/amiFamily → (amiSelectorTerms, amiFamily).
fn legacy_amis(
    spec: &AWSNodeTemplateSpec,
    ctx: &mut Ctx,
    object: &str,
    prefix: &str,
) -> (Vec<AmiSelectorTerm>, Option<AmiFamily>) {
    let family = spec.ami_family.clone().unwrap_or_else(|| "AL2".to_string());
    let terms = ami_terms(&spec.ami_selector);
    family_and_terms(&family, terms, ctx, object, prefix)
}

/// Chooses v1 AMI terms and family from a legacy family and explicit terms.
fn family_and_terms(
    family: &str,
    terms: Vec<AmiSelectorTerm>,
    ctx: &mut Ctx,
    object: &str,
    prefix: &str,
) -> (Vec<AmiSelectorTerm>, Option<AmiFamily>) {
    if family == "AL2" {
        ctx.warn(object, format!("{prefix}.amiFamily AL2: Amazon Linux 2 reached end of support on 2026-06-30 and EKS publishes no AL2 AMIs for Kubernetes 1.33 or later; move to amiSelectorTerms [{{alias: al2023@latest}}] (AL2023 nodes are configured by nodeadm, not bootstrap.sh: review any user data)"));
    }
    let v1_family = parse_family(family);
    if !terms.is_empty() {
        let v1_family = v1_family.unwrap_or_else(|| {
            ctx.warn(object, format!("{prefix}.amiFamily {family} is not a v1 family; using Custom (supply user data for your AMIs)"));
            AmiFamily::Custom
        });
        return (terms, Some(v1_family));
    }
    if let Some(alias) = alias_for_family(family) {
        return (vec![AmiSelectorTerm::alias(alias)], None);
    }
    if family == "Ubuntu" {
        ctx.warn(object, format!("{prefix}.amiFamily Ubuntu was removed in v1; using Custom with Canonical's ubuntu-eks AMIs (check the name pattern and add bootstrap user data)"));
        let term = AmiSelectorTerm {
            name: Some("ubuntu-eks/k8s_*".to_string()),
            owner: Some(CANONICAL_OWNER.to_string()),
            ..AmiSelectorTerm::default()
        };
        return (vec![term], Some(AmiFamily::Custom));
    }
    ctx.warn(object, format!("{prefix}.amiFamily {family} without an AMI selector has no v1 equivalent; add spec.amiSelectorTerms"));
    (Vec::new(), Some(AmiFamily::Custom))
}

fn parse_family(family: &str) -> Option<AmiFamily> {
    serde_json::from_value(serde_json::Value::String(family.to_string())).ok()
}

/// v1beta1 EC2NodeClass → v1.
pub(super) fn from_v1beta1(class: v1beta1::EC2NodeClass, ctx: &mut Ctx) -> EC2NodeClass {
    let object = format!("EC2NodeClass/{}", class.metadata.name);
    let spec = class.spec;
    let family = spec.ami_family.clone().unwrap_or_else(|| "AL2".to_string());
    let (ami_selector_terms, ami_family) =
        family_and_terms(&family, spec.ami_selector_terms, ctx, &object, "spec");
    warn_other(ctx, &object, "spec", &spec.other, &[]);
    let instance_store_policy = spec.instance_store_policy.as_deref().and_then(|p| {
        let parsed = (p == "RAID0").then_some(InstanceStorePolicy::Raid0);
        if parsed.is_none() {
            ctx.warn(
                &object,
                format!("spec.instanceStorePolicy {p} is not supported in v1; dropped"),
            );
        }
        parsed
    });
    let class_spec = EC2NodeClassSpec {
        subnet_selector_terms: spec.subnet_selector_terms,
        security_group_selector_terms: spec.security_group_selector_terms,
        ami_selector_terms,
        ami_family,
        user_data: spec.user_data,
        role: spec.role,
        instance_profile: spec.instance_profile,
        tags: spec.tags,
        block_device_mappings: spec.block_device_mappings,
        instance_store_policy,
        detailed_monitoring: spec.detailed_monitoring,
        associate_public_ip_address: spec.associate_public_ip_address,
        metadata_options: Some(v1beta1_metadata_options(spec.metadata_options)),
        context: spec.context,
        ..EC2NodeClassSpec::default()
    };
    let mut out = EC2NodeClass::new(&class.metadata.name, class_spec);
    out.metadata = v1_meta(&class.metadata);
    out
}
