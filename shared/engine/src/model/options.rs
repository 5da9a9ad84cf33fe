//! Policies the engine is told to follow, spelled as Karpenter spells its flags.

/// Karpenter's `--min-values-policy`: `Strict` (the default) refuses a NodeClaim whose
/// options cannot meet a requirement's `minValues`; `BestEffort` lowers that `minValues` to
/// what the options reach, launches, and marks the NodeClaim
/// (`karpenter.sh/nodeclaim-min-values-relaxed: "true"`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum MinValuesPolicy {
    #[default]
    Strict,
    BestEffort,
}

impl MinValuesPolicy {
    /// Karpenter's spelling, `Strict` or `BestEffort`.
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "Strict" => Some(MinValuesPolicy::Strict),
            "BestEffort" => Some(MinValuesPolicy::BestEffort),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            MinValuesPolicy::Strict => "Strict",
            MinValuesPolicy::BestEffort => "BestEffort",
        }
    }
}
