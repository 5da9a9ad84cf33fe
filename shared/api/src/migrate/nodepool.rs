//! v1alpha5 Provisioner and v1beta1 NodePool → v1 NodePool (kubelet moves to the node class).

use super::nodeclass::{from_provider, v1_meta, warn_other};
use super::selectors::seconds_to_duration;
use super::{Ctx, Doc, KubeletMove};
use crate::ApiError;
use crate::legacy::v1alpha5::{LegacyKubelet, Provisioner};
use crate::legacy::{LegacyRequirement, v1beta1};
use crate::v1::{
    ConsolidationPolicy, Disruption, NodeClaimTemplate, NodeClaimTemplateSpec, NodeClassReference,
    NodePool, NodePoolSpec, NodeSelectorRequirementWithMinValues, Operator, TemplateMetadata,
    disruption::default_budgets,
};
use kerf_labels::{self as labels, aws};

/// Legacy requirements → v1 (unknown operators are dropped with a warning).
fn requirements(
    reqs: Vec<LegacyRequirement>,
    ctx: &mut Ctx,
    object: &str,
    path: &str,
) -> Vec<NodeSelectorRequirementWithMinValues> {
    let mut out = Vec::with_capacity(reqs.len());
    for req in reqs {
        let op =
            serde_json::from_value::<Operator>(serde_json::Value::String(req.operator.clone()));
        match op {
            Ok(operator) => out.push(NodeSelectorRequirementWithMinValues {
                key: req.key,
                operator,
                values: req.values,
                min_values: req.min_values,
            }),
            Err(_) => ctx.warn(
                object,
                format!(
                    "{path}.requirements: operator {} of {} is not supported in v1; dropped",
                    req.operator, req.key
                ),
            ),
        }
    }
    out
}

/// A requirement as `(key, operator, values)`.
type RequirementSpec = (&'static str, Operator, &'static [&'static str]);

/// The requirements the v1alpha5 defaulting webhook added to a Provisioner that did not
/// constrain the key(s); v1 adds none, so migration writes them out. Each entry: the keys whose
/// absence triggered the default, then the requirements added.
const V1ALPHA5_DEFAULTS: [(&[&str], &[RequirementSpec]); 4] = [
    (&[labels::OS], &[(labels::OS, Operator::In, &["linux"])]),
    (&[labels::ARCH], &[(labels::ARCH, Operator::In, &["amd64"])]),
    (
        &[labels::CAPACITY_TYPE],
        &[(
            labels::CAPACITY_TYPE,
            Operator::In,
            &[labels::CAPACITY_TYPE_ON_DEMAND],
        )],
    ),
    (
        &[
            labels::INSTANCE_TYPE,
            aws::INSTANCE_FAMILY,
            aws::INSTANCE_CATEGORY,
            aws::INSTANCE_GENERATION,
        ],
        &[
            (aws::INSTANCE_CATEGORY, Operator::In, &["c", "m", "r"]),
            (aws::INSTANCE_GENERATION, Operator::Gt, &["2"]),
        ],
    ),
];

/// Appends the v1alpha5 webhook's default requirements for keys `given` does not constrain,
/// except a default that would rule out an instance type the Provisioner or the input's pods
/// name outright (`amd64` against `t4g.2xlarge`, categories c, m, r against it): the migrated
/// NodePool must still launch what they ask for.
fn v1alpha5_default_requirements(
    given: &[LegacyRequirement],
    out: &mut Vec<NodeSelectorRequirementWithMinValues>,
    ctx: &mut Ctx,
    object: &str,
) {
    let mut named: std::collections::BTreeSet<String> = ctx.pod_types.clone();
    for r in given {
        if r.key == labels::INSTANCE_TYPE && r.operator == "In" {
            named.extend(r.values.iter().cloned());
        }
    }
    let mut added = Vec::new();
    for (keys, defaults) in V1ALPHA5_DEFAULTS {
        if given.iter().any(|r| keys.contains(&r.key.as_str())) {
            continue;
        }
        if let Some(t) = ruled_out(keys, &named) {
            ctx.warn(
                object,
                format!(
                    "spec.requirements: left out the v1alpha5 default on {} because it would rule \
                     out {t}, which the input names",
                    keys.join(", ")
                ),
            );
            continue;
        }
        for (key, operator, values) in defaults {
            out.push(NodeSelectorRequirementWithMinValues::new(
                *key, *operator, values,
            ));
            added.push(format!("{key} {operator:?} {}", values.join(",")));
        }
    }
    if !added.is_empty() {
        ctx.warn(
            object,
            format!(
                "spec.requirements: added what the v1alpha5 webhook defaulted and v1 does not: {}",
                added.join("; ")
            ),
        );
    }
}

/// The first of `named` a default on `keys` would rule out.
fn ruled_out<'a>(keys: &[&str], named: &'a std::collections::BTreeSet<String>) -> Option<&'a str> {
    let outside = |t: &str| match super::named::parse(t) {
        None => false,
        Some(n) if keys.contains(&labels::ARCH) => n.graviton,
        Some(n) if keys.contains(&aws::INSTANCE_CATEGORY) => {
            !["c", "m", "r"].contains(&n.category) || n.generation <= 2
        }
        Some(_) => false,
    };
    named.iter().map(String::as_str).find(|t| outside(t))
}

/// Queues kubelet settings for the node class and warns about `containerRuntime`.
fn move_kubelet(
    kubelet: Option<LegacyKubelet>,
    node_class: &str,
    ctx: &mut Ctx,
    object: &str,
    path: &str,
) {
    let Some(kubelet) = kubelet else { return };
    if let Some(runtime) = &kubelet.container_runtime {
        ctx.warn(object, format!("{path}.containerRuntime ({runtime}) has no v1 equivalent (containerd only); dropped"));
    }
    ctx.kubelets.push(KubeletMove {
        node_class: node_class.to_string(),
        kubelet: kubelet.kubelet,
        source: object.to_string(),
    });
}

/// Provisioner → NodePool, plus an EC2NodeClass for an inline `provider`.
pub(super) fn from_provisioner(p: Provisioner, ctx: &mut Ctx) -> Result<Vec<Doc>, ApiError> {
    let name = p.metadata.name.clone();
    let object = format!("Provisioner/{name}");
    let spec = p.spec;
    let mut docs = Vec::new();
    let class_name = match (spec.provider, spec.provider_ref) {
        (Some(provider), provider_ref) => {
            if provider_ref.is_some() {
                ctx.warn(
                    &object,
                    "spec.provider and spec.providerRef both set; using provider",
                );
            }
            ctx.warn(
                &object,
                format!("spec.provider moved to EC2NodeClass/{name}"),
            );
            let class = from_provider(&name, provider, ctx, &object, "spec.provider");
            docs.push(Doc::NodeClass(Box::new(class)));
            name.clone()
        }
        (None, Some(r)) => r.name,
        (None, None) => {
            ctx.warn(&object, "neither spec.provider nor spec.providerRef is set; nodeClassRef points at EC2NodeClass/default");
            "default".to_string()
        }
    };
    move_kubelet(
        spec.kubelet_configuration,
        &class_name,
        ctx,
        &object,
        "spec.kubeletConfiguration",
    );
    warn_other(ctx, &object, "spec", &spec.other, &[]);
    let disruption = provisioner_disruption(
        spec.consolidation.and_then(|c| c.enabled).unwrap_or(false),
        spec.ttl_seconds_after_empty,
        ctx,
        &object,
    );
    let mut reqs = requirements(spec.requirements.clone(), ctx, &object, "spec");
    v1alpha5_default_requirements(&spec.requirements, &mut reqs, ctx, &object);
    let template = NodeClaimTemplate {
        metadata: TemplateMetadata {
            labels: spec.labels,
            annotations: spec.annotations,
        },
        spec: NodeClaimTemplateSpec {
            taints: spec.taints,
            startup_taints: spec.startup_taints,
            requirements: reqs,
            node_class_ref: NodeClassReference::ec2(class_name),
            termination_grace_period: None,
            expire_after: spec
                .ttl_seconds_until_expired
                .map_or_else(|| "Never".to_string(), seconds_to_duration),
        },
    };
    let pool_spec = NodePoolSpec {
        template,
        disruption,
        limits: spec.limits.map(|l| l.resources).unwrap_or_default(),
        weight: spec.weight,
        replicas: None,
    };
    let mut pool = NodePool::new(&name, pool_spec);
    pool.metadata = v1_meta(&p.metadata);
    docs.insert(0, Doc::NodePool(Box::new(pool)));
    Ok(docs)
}

/// consolidation.enabled / ttlSecondsAfterEmpty → v1 disruption.
fn provisioner_disruption(
    consolidation: bool,
    ttl_after_empty: Option<i64>,
    ctx: &mut Ctx,
    object: &str,
) -> Disruption {
    let (policy, after) = match (consolidation, ttl_after_empty) {
        (true, ttl) => {
            if ttl.is_some() {
                ctx.warn(
                    object,
                    "spec.ttlSecondsAfterEmpty is ignored with consolidation enabled; dropped",
                );
            }
            (
                ConsolidationPolicy::WhenEmptyOrUnderutilized,
                "0s".to_string(),
            )
        }
        (false, Some(ttl)) => (ConsolidationPolicy::WhenEmpty, seconds_to_duration(ttl)),
        (false, None) => (ConsolidationPolicy::WhenEmpty, "Never".to_string()),
    };
    Disruption {
        consolidate_after: after,
        consolidation_policy: policy,
        budgets: default_budgets(),
    }
}

/// v1beta1 NodePool → v1.
pub(super) fn from_v1beta1(p: v1beta1::NodePool, ctx: &mut Ctx) -> NodePool {
    let object = format!("NodePool/{}", p.metadata.name);
    let spec = p.spec;
    let tspec = spec.template.spec;
    let node_class_ref = v1beta1_ref(tspec.node_class_ref, ctx, &object);
    move_kubelet(
        tspec.kubelet,
        &node_class_ref.name,
        ctx,
        &object,
        "spec.template.spec.kubelet",
    );
    if tspec.resources.is_some() {
        ctx.warn(
            &object,
            "spec.template.spec.resources has no v1 equivalent; dropped",
        );
    }
    warn_other(ctx, &object, "spec.template.spec", &tspec.other, &[]);
    warn_other(ctx, &object, "spec", &spec.other, &[]);
    let (disruption, expire_after) =
        v1beta1_disruption(spec.disruption.unwrap_or_default(), ctx, &object);
    let template = NodeClaimTemplate {
        metadata: TemplateMetadata {
            labels: spec.template.metadata.labels,
            annotations: spec.template.metadata.annotations,
        },
        spec: NodeClaimTemplateSpec {
            taints: tspec.taints,
            startup_taints: tspec.startup_taints,
            requirements: requirements(tspec.requirements, ctx, &object, "spec.template.spec"),
            node_class_ref,
            termination_grace_period: None,
            expire_after,
        },
    };
    let pool_spec = NodePoolSpec {
        template,
        disruption,
        limits: spec.limits,
        weight: spec.weight,
        replicas: None,
    };
    let mut pool = NodePool::new(&p.metadata.name, pool_spec);
    pool.metadata = v1_meta(&p.metadata);
    pool
}

fn v1beta1_ref(
    r: Option<v1beta1::NodeClassRef>,
    ctx: &mut Ctx,
    object: &str,
) -> NodeClassReference {
    let r = r.unwrap_or_default();
    if r.name.is_empty() {
        ctx.warn(
            object,
            "spec.template.spec.nodeClassRef.name is unset; using default",
        );
    }
    let name = if r.name.is_empty() {
        "default".to_string()
    } else {
        r.name
    };
    let group = r
        .api_version
        .as_deref()
        .and_then(|v| v.split('/').next())
        .map(str::to_string);
    if r.kind.is_none() || group.is_none() {
        ctx.warn(object, "spec.template.spec.nodeClassRef without apiVersion/kind; assuming karpenter.k8s.aws EC2NodeClass");
    }
    if let Some(kind) = r.kind.as_deref().filter(|k| *k != "EC2NodeClass") {
        ctx.warn(
            object,
            format!("spec.template.spec.nodeClassRef points at {kind}/{name}, not an EC2NodeClass; Kerf launches EC2 instances only"),
        );
    }
    NodeClassReference {
        kind: r.kind.unwrap_or_else(|| "EC2NodeClass".to_string()),
        name,
        group: group.unwrap_or_else(|| "karpenter.k8s.aws".to_string()),
    }
}

/// v1beta1 disruption → (v1 disruption, template expireAfter).
fn v1beta1_disruption(d: v1beta1::Disruption, ctx: &mut Ctx, object: &str) -> (Disruption, String) {
    let policy = match d.consolidation_policy.as_deref() {
        None | Some("WhenUnderutilized") => ConsolidationPolicy::WhenEmptyOrUnderutilized,
        Some("WhenEmpty") => ConsolidationPolicy::WhenEmpty,
        Some(other) => {
            ctx.warn(object, format!("spec.disruption.consolidationPolicy {other} is unknown; using WhenEmptyOrUnderutilized"));
            ConsolidationPolicy::WhenEmptyOrUnderutilized
        }
    };
    let after = d.consolidate_after.unwrap_or_else(|| "0s".to_string());
    let disruption = Disruption {
        consolidate_after: after,
        consolidation_policy: policy,
        budgets: d.budgets.unwrap_or_else(default_budgets),
    };
    (
        disruption,
        d.expire_after.unwrap_or_else(|| "720h".to_string()),
    )
}
