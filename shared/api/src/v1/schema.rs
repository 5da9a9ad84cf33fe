//! CEL rules and patterns of the EC2NodeClass schema, kept out of the type definitions.

use serde_json::{Value, json};

/// Pattern of a resource quantity.
pub const QUANTITY: &str = r"^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$";
/// Pattern of an eviction threshold: a percentage or a quantity.
pub const THRESHOLD: &str = r"^((\d{1,2}(\.\d{1,2})?|100(\.0{1,2})?)%||(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?)$";
/// Eviction signals the kubelet settings accept.
pub const EVICTION_SIGNAL_RULE_KEYS: [&str; 6] = [
    "memory.available",
    "nodefs.available",
    "nodefs.inodesFree",
    "imagefs.available",
    "imagefs.inodesFree",
    "pid.available",
];
/// Alias families.
const ALIAS_FAMILIES: [(&str, &str); 6] = [
    ("al2", "AL2"),
    ("al2023", "AL2023"),
    ("bottlerocket", "Bottlerocket"),
    ("windows2019", "Windows2019"),
    ("windows2022", "Windows2022"),
    ("windows2025", "Windows2025"),
];

fn rule(message: impl Into<String>, rule: impl Into<String>) -> Value {
    json!({"message": message.into(), "rule": rule.into()})
}

/// Object-level rules of the EC2NodeClass spec.
pub fn ec2nodeclass_rules() -> Value {
    let mut rules = vec![rule(
        "must specify exactly one of ['role', 'instanceProfile']",
        "(has(self.role) && !has(self.instanceProfile)) || (!has(self.role) && has(self.instanceProfile))",
    )];
    for (prefix, family) in ALIAS_FAMILIES {
        let article = if prefix == "al2" || prefix == "al2023" {
            "an"
        } else {
            "a"
        };
        rules.push(rule(
            format!("if set, amiFamily must be '{family}' or 'Custom' when using {article} {family} alias"),
            format!(
                "!has(self.amiFamily) || (self.amiSelectorTerms.exists(x, has(x.alias) && x.alias.find('^[^@]+') == '{prefix}') ? (self.amiFamily == 'Custom' || self.amiFamily == '{family}') : true)"
            ),
        ));
    }
    rules.push(rule(
        "must specify amiFamily if amiSelectorTerms does not contain an alias",
        "self.amiSelectorTerms.exists(x, has(x.alias)) ? true : has(self.amiFamily)",
    ));
    Value::Array(rules)
}

/// Rules of a selector term's `tags`.
pub fn tag_map_rules() -> Value {
    json!([rule(
        "empty tag keys or values aren't supported",
        "self.all(k, k != '' && self[k] != '')"
    )])
}

/// Rules of `spec.tags`.
pub fn tags_rules() -> Value {
    let mut rules = vec![rule(
        "empty tag keys aren't supported",
        "self.all(k, k != '')",
    )];
    rules.push(rule(
        "tag contains a restricted tag matching eks:eks-cluster-name",
        "self.all(k, k !='eks:eks-cluster-name')",
    ));
    rules.push(rule(
        "tag contains a restricted tag matching kubernetes.io/cluster/",
        "self.all(k, !k.startsWith('kubernetes.io/cluster') )",
    ));
    for key in [
        kerf_labels::NODEPOOL,
        kerf_labels::aws::NODECLAIM_TAG,
        kerf_labels::aws::NODECLASS,
    ] {
        rules.push(rule(
            format!("tag contains a restricted tag matching {key}"),
            format!("self.all(k, k != '{key}')"),
        ));
    }
    Value::Array(rules)
}

/// Rules of `amiSelectorTerms`.
pub fn ami_terms_rules() -> Value {
    json!([
        rule(
            "expected at least one, got none, ['tags', 'id', 'name', 'alias', 'ssmParameter']",
            "self.all(x, has(x.tags) || has(x.id) || has(x.name) || has(x.alias) || has(x.ssmParameter))"
        ),
        rule(
            "'id' is mutually exclusive, cannot be set with a combination of other fields in amiSelectorTerms",
            "!self.exists(x, has(x.id) && (has(x.alias) || has(x.tags) || has(x.name) || has(x.owner)))"
        ),
        rule(
            "'alias' is mutually exclusive, cannot be set with a combination of other fields in amiSelectorTerms",
            "!self.exists(x, has(x.alias) && (has(x.id) || has(x.tags) || has(x.name) || has(x.owner)))"
        ),
        rule(
            "'alias' is mutually exclusive, cannot be set with a combination of other amiSelectorTerms",
            "!(self.exists(x, has(x.alias)) && self.size() != 1)"
        )
    ])
}

/// Rules of an AMI alias.
pub fn alias_rules() -> Value {
    json!([
        rule(
            "'alias' is improperly formatted, must match the format 'family@version'",
            "self.matches('^[a-zA-Z0-9]+@.+$')"
        ),
        rule(
            "family is not supported, must be one of the following: 'al2', 'al2023', 'bottlerocket', 'windows2019', 'windows2022', 'windows2025'",
            "self.split('@')[0] in ['al2','al2023','bottlerocket','windows2019','windows2022','windows2025']"
        ),
        rule(
            "windows families may only specify version 'latest'",
            "self.split('@')[0] in ['windows2019','windows2022','windows2025'] ? self.split('@')[1] == 'latest' : true"
        )
    ])
}

/// Rules of `networkInterfaces`.
pub fn network_interface_rules() -> Value {
    json!([
        rule(
            "networkInterfaces must include a primary interface with interfaceType='interface'",
            "self.size() == 0 || self.exists(x, x.deviceIndex == 0 && x.networkCardIndex == 0 && x.interfaceType == 'interface')"
        ),
        rule(
            "networkInterfaces must not have duplicate networkCardIndex and deviceIndex pairs, and can have at most one efa device per network card",
            "self.all(x, self.filter(y, x.networkCardIndex == y.networkCardIndex && x.deviceIndex == y.deviceIndex).size() == 1 && (x.interfaceType != 'efa-only' || self.filter(y, x.networkCardIndex == y.networkCardIndex && y.interfaceType == 'efa-only').size() == 1))"
        )
    ])
}

/// Object-level rules of the kubelet settings.
pub fn kubelet_rules() -> Value {
    json!([
        rule(
            "imageGCHighThresholdPercent must be greater than imageGCLowThresholdPercent",
            "has(self.imageGCHighThresholdPercent) && has(self.imageGCLowThresholdPercent) ?  self.imageGCHighThresholdPercent > self.imageGCLowThresholdPercent  : true"
        ),
        rule(
            "evictionSoft OwnerKey does not have a matching evictionSoftGracePeriod",
            "has(self.evictionSoft) ? self.evictionSoft.all(e, (e in self.evictionSoftGracePeriod)):true"
        ),
        rule(
            "evictionSoftGracePeriod OwnerKey does not have a matching evictionSoft",
            "has(self.evictionSoftGracePeriod) ? self.evictionSoftGracePeriod.all(e, (e in self.evictionSoft)):true"
        )
    ])
}

/// Rules of `systemReserved` / `kubeReserved`.
pub fn reserved_rules(field: &str) -> Value {
    json!([
        rule(
            format!("valid keys for {field} are ['cpu','memory','ephemeral-storage','pid']"),
            "self.all(x, x=='cpu' || x=='memory' || x=='ephemeral-storage' || x=='pid')"
        ),
        rule(
            format!("{field} value cannot be a negative resource quantity"),
            "self.all(x, !self[x].startsWith('-'))"
        )
    ])
}

/// Rules of the eviction maps.
pub fn eviction_rules(field: &str) -> Value {
    let keys: Vec<String> = EVICTION_SIGNAL_RULE_KEYS
        .iter()
        .map(|k| format!("'{k}'"))
        .collect();
    let keys = keys.join(",");
    json!([rule(
        format!("valid keys for {field} are [{keys}]"),
        format!("self.all(x, x in [{keys}])")
    )])
}
