//! The invalid EC2NodeClasses of shared/sim/tests/cel.rs, as [`Case`]s.

use serde_json::{Value, json};

use super::invalid::{Case, Op, ec2nodeclass};

fn class(name: &'static str, from: &'static str, edit: impl FnOnce(&mut Value)) -> Case {
    let mut doc = ec2nodeclass(name);
    edit(&mut doc["spec"]);
    Case {
        name,
        from,
        op: Op::Create(doc),
    }
}

fn alias(name: &'static str, a: &str) -> Case {
    class(name, "cel.rs ami_alias_family_and_windows_version", |s| {
        s["amiSelectorTerms"] = json!([{"alias": a}]);
    })
}

fn bdm(device: &str, root: bool) -> Value {
    json!({"deviceName": device, "rootVolume": root, "ebs": {"volumeSize": "20Gi"}})
}

/// The EC2NodeClass cases.
pub fn cases() -> Vec<Case> {
    const ROLE: &str = "cel.rs nodeclass_needs_exactly_one_of_role_and_instance_profile";
    const TERMS: &str = "cel.rs ami_alias_excludes_other_terms_and_fields";
    const SOFT: &str = "cel.rs soft_eviction_needs_a_grace_period";
    const TAGS: &str = "cel.rs restricted_tags_are_rejected";
    const ROOT: &str = "cel.rs only_one_root_volume";
    vec![
        class("role-and-instance-profile", ROLE, |s| {
            s["instanceProfile"] = json!("KarpenterProfile");
        }),
        class("neither-role-nor-instance-profile", ROLE, |s| {
            if let Some(o) = s.as_object_mut() {
                o.remove("role");
            }
        }),
        class("alias-with-other-terms", TERMS, |s| {
            s["amiSelectorTerms"] = json!([{"alias": "al2023@latest"}, {"id": "ami-0abc"}]);
        }),
        class("alias-with-tags", TERMS, |s| {
            s["amiSelectorTerms"] = json!([{"alias": "al2023@latest", "tags": {"team": "a"}}]);
        }),
        class("ids-without-ami-family", TERMS, |s| {
            s["amiSelectorTerms"] = json!([{"id": "ami-0abc"}, {"tags": {"team": "a"}}]);
        }),
        alias("alias-unknown-family", "ubuntu@latest"),
        alias("alias-windows-pinned", "windows2022@v1"),
        alias("alias-without-version", "al2023"),
        class(
            "bottlerocket-alias-other-family",
            "cel.rs ami_alias_family_and_windows_version",
            |s| {
                s["amiSelectorTerms"] = json!([{"alias": "bottlerocket@latest"}]);
                s["amiFamily"] = json!("AL2023");
            },
        ),
        class("eviction-soft-without-grace", SOFT, |s| {
            s["kubelet"] = json!({"evictionSoft": {"memory.available": "5%"}});
        }),
        class("eviction-soft-other-grace", SOFT, |s| {
            s["kubelet"] = json!({"evictionSoft": {"memory.available": "5%"},
                "evictionSoftGracePeriod": {"nodefs.available": "1m"}});
        }),
        class(
            "image-gc-high-not-above-low",
            "cel.rs image_gc_high_threshold_must_exceed_low",
            |s| {
                s["kubelet"] =
                    json!({"imageGCHighThresholdPercent": 50, "imageGCLowThresholdPercent": 50});
            },
        ),
        class("restricted-tag-cluster", TAGS, |s| {
            s["tags"] = json!({"kubernetes.io/cluster/prod": "owned"});
        }),
        class("restricted-tag-nodepool", TAGS, |s| {
            s["tags"] = json!({"karpenter.sh/nodepool": "x"});
        }),
        class("two-root-volumes", ROOT, |s| {
            s["blockDeviceMappings"] = json!([bdm("/dev/xvda", true), bdm("/dev/xvdb", true)]);
        }),
        class("ebs-without-size-or-snapshot", ROOT, |s| {
            s["blockDeviceMappings"] = json!([bdm("/dev/xvda", true),
                {"deviceName": "/dev/xvdb", "ebs": {"encrypted": true}}]);
        }),
    ]
}
