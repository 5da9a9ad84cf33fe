//! `amiSelectorTerms[].alias` (`al2023@latest`, `al2@v20240807`, `bottlerocket@v1.20.0`,
//! `windows2022@latest`) and the SSM public parameters each alias resolves through, per
//! architecture and variant.

use crate::error::AwsError;

/// The public parameter root; tests seed a copy under a non-reserved path.
pub const DEFAULT_SSM_ROOT: &str = "/aws/service";

/// AMI variants Karpenter resolves per alias.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Variant {
    Standard,
    Nvidia,
    Neuron,
}

impl Variant {
    pub fn as_str(self) -> &'static str {
        match self {
            Variant::Standard => "standard",
            Variant::Nvidia => "nvidia",
            Variant::Neuron => "neuron",
        }
    }
}

/// `family@version` from `amiSelectorTerms[].alias`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Alias {
    pub family: String,
    /// `latest` or a pinned version (`v20250228`, `v1.20.0`).
    pub version: String,
}

impl Alias {
    pub fn parse(s: &str) -> Result<Alias, AwsError> {
        let (family, version) = s.split_once('@').unwrap_or((s, "latest"));
        let family = family.to_ascii_lowercase();
        let windows = WINDOWS.iter().any(|(f, _)| *f == family);
        if !(windows || matches!(family.as_str(), "al2023" | "al2" | "bottlerocket"))
            || version.is_empty()
        {
            return Err(AwsError::invalid(
                "ResolveAmi",
                format!("unsupported alias {s:?}"),
            ));
        }
        if windows && version != "latest" {
            return Err(AwsError::invalid(
                "ResolveAmi",
                format!("alias {s:?}: Windows aliases only take @latest"),
            ));
        }
        Ok(Alias {
            family,
            version: version.to_string(),
        })
    }

    fn latest(&self) -> bool {
        self.version == "latest"
    }
}

/// Windows aliases and the Windows Server release in their parameter names.
const WINDOWS: [(&str, &str); 3] = [
    ("windows2019", "2019"),
    ("windows2022", "2022"),
    ("windows2025", "2025"),
];

/// One SSM parameter to read for an alias.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AliasParameter {
    pub arch: &'static str,
    pub variant: Variant,
    pub name: String,
}

fn variants(arch: &str) -> &'static [Variant] {
    if arch == "x86_64" {
        &[Variant::Standard, Variant::Nvidia, Variant::Neuron]
    } else {
        &[Variant::Standard, Variant::Nvidia]
    }
}

/// The SSM parameter names an alias resolves through, for Kubernetes `k8s` (e.g. `1.31`).
pub fn alias_parameters(a: &Alias, k8s: &str, root: &str) -> Result<Vec<AliasParameter>, AwsError> {
    let mut out = Vec::new();
    for arch in ["x86_64", "arm64"] {
        for &variant in variants(arch) {
            if let Some(name) = parameter_name(a, k8s, root, arch, variant)? {
                out.push(AliasParameter {
                    arch,
                    variant,
                    name,
                });
            }
        }
    }
    Ok(out)
}

fn parameter_name(
    a: &Alias,
    k8s: &str,
    root: &str,
    arch: &str,
    v: Variant,
) -> Result<Option<String>, AwsError> {
    let eks = format!("{root}/eks/optimized-ami/{k8s}");
    Ok(match a.family.as_str() {
        "al2023" => {
            let leaf = if a.latest() {
                "recommended".to_string()
            } else {
                format!(
                    "amazon-eks-node-al2023-{arch}-{}-{k8s}-{}",
                    v.as_str(),
                    a.version
                )
            };
            Some(format!(
                "{eks}/amazon-linux-2023/{arch}/{}/{leaf}/image_id",
                v.as_str()
            ))
        }
        "al2" => al2_parameter(a, k8s, &eks, arch, v)?,
        f if f.starts_with("windows") => {
            let release = WINDOWS.iter().find(|(w, _)| *w == f).map(|(_, r)| *r);
            match release {
                Some(r) if arch == "x86_64" && v == Variant::Standard => Some(format!(
                    "{root}/ami-windows-latest/Windows_Server-{r}-English-Core-EKS_Optimized-{k8s}/image_id"
                )),
                _ => None,
            }
        }
        _ => {
            if v == Variant::Neuron {
                return Ok(None);
            }
            let flavour = if v == Variant::Nvidia { "-nvidia" } else { "" };
            let version = if a.latest() {
                "latest"
            } else {
                a.version.trim_start_matches('v')
            };
            Some(format!(
                "{root}/bottlerocket/aws-k8s-{k8s}{flavour}/{arch}/{version}/image_id"
            ))
        }
    })
}

fn al2_parameter(
    a: &Alias,
    k8s: &str,
    eks: &str,
    arch: &str,
    v: Variant,
) -> Result<Option<String>, AwsError> {
    let minor = k8s
        .split('.')
        .nth(1)
        .and_then(|m| m.parse::<u32>().ok())
        .unwrap_or(0);
    if k8s.starts_with("1.") && minor >= 33 {
        return Err(AwsError::invalid(
            "ResolveAmi",
            "al2 aliases are not supported on Kubernetes >= 1.33",
        ));
    }
    let (path, pinned) = match (arch, v) {
        ("x86_64", Variant::Standard) => ("amazon-linux-2", "amazon-eks-node"),
        ("arm64", Variant::Standard) => ("amazon-linux-2-arm64", "amazon-eks-arm64-node"),
        ("x86_64", Variant::Nvidia | Variant::Neuron) => {
            ("amazon-linux-2-gpu", "amazon-eks-gpu-node")
        }
        _ => return Ok(None),
    };
    if v == Variant::Neuron {
        return Ok(None);
    }
    let leaf = if a.latest() {
        "recommended".into()
    } else {
        format!("{pinned}-{k8s}-{}", a.version)
    };
    Ok(Some(format!("{eks}/{path}/{leaf}/image_id")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(alias: &str, k8s: &str) -> Vec<String> {
        let a = Alias::parse(alias).unwrap();
        alias_parameters(&a, k8s, DEFAULT_SSM_ROOT)
            .unwrap()
            .into_iter()
            .map(|p| p.name)
            .collect()
    }

    #[test]
    fn al2023_latest_and_pinned() {
        let n = names("al2023@latest", "1.31");
        assert_eq!(n.len(), 5);
        assert_eq!(
            n[0],
            "/aws/service/eks/optimized-ami/1.31/amazon-linux-2023/x86_64/standard/recommended/image_id"
        );
        let p = names("al2023@v20250228", "1.31");
        assert_eq!(
            p[3],
            "/aws/service/eks/optimized-ami/1.31/amazon-linux-2023/arm64/standard/amazon-eks-node-al2023-arm64-standard-1.31-v20250228/image_id"
        );
    }

    #[test]
    fn windows_is_amd64_standard_and_latest_only() {
        assert_eq!(
            names("windows2022@latest", "1.31"),
            vec![
                "/aws/service/ami-windows-latest/Windows_Server-2022-English-Core-EKS_Optimized-1.31/image_id"
            ]
        );
        assert!(Alias::parse("windows2019@v1").is_err());
        assert!(Alias::parse("windows2030@latest").is_err());
    }

    #[test]
    fn bottlerocket_and_al2() {
        let b = names("bottlerocket@v1.20.0", "1.31");
        assert_eq!(
            b[0],
            "/aws/service/bottlerocket/aws-k8s-1.31/x86_64/1.20.0/image_id"
        );
        assert_eq!(
            b[1],
            "/aws/service/bottlerocket/aws-k8s-1.31-nvidia/x86_64/1.20.0/image_id"
        );
        let a = names("al2@latest", "1.30");
        assert_eq!(
            a[1],
            "/aws/service/eks/optimized-ami/1.30/amazon-linux-2-gpu/recommended/image_id"
        );
        assert!(alias_parameters(&Alias::parse("al2@latest").unwrap(), "1.33", "/r").is_err());
        assert!(Alias::parse("windows@latest").is_err());
    }
}
