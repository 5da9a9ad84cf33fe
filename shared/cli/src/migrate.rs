//! `kerf migrate` (legacy Karpenter manifests to v1 YAML) and `kerf crds` (the CRDs generated
//! from the v1 types, byte-identical to `infra/crds/`).

use std::io::Read;
use std::path::Path;

use crate::args::MigrateArgs;
use crate::commands::Outcome;
use crate::error::CliError;
use crate::input;

/// One input's name (`-` for stdin) and text.
struct Source {
    file: String,
    text: String,
}

/// `kerf migrate`: every file is checked on its own (so bad input names its file), then all
/// are converted together, so a Provisioner's kubelet settings reach the AWSNodeTemplate it
/// references even when the two live in different files.
pub fn migrate(a: &MigrateArgs) -> Result<Outcome, CliError> {
    let sources = read_sources(&a.inputs)?;
    for s in &sources {
        kerf_api::migrate_documents(&s.text).map_err(|e| CliError::File {
            file: s.file.clone(),
            message: e.to_string(),
        })?;
    }
    let out = kerf_api::migrate_documents(&join(&sources))
        .map_err(|e| CliError::Internal(format!("migrating all inputs together: {e}")))?;
    let mut warnings = out.warnings;
    if out.yaml.is_empty() {
        warnings.push("no documents in the input".into());
    }
    Ok(Outcome {
        stdout: out.yaml,
        warnings,
        ..Outcome::default()
    })
}

/// `kerf crds`: the NodePool, NodeClaim and EC2NodeClass CRDs as one YAML stream.
pub fn crds() -> Result<Outcome, CliError> {
    let stdout = kerf_api::crds::to_yaml().map_err(|e| CliError::Internal(e.to_string()))?;
    Ok(Outcome {
        stdout,
        ..Outcome::default()
    })
}

/// Joins the inputs into one multi-document YAML stream.
fn join(sources: &[Source]) -> String {
    let texts: Vec<&str> = sources.iter().map(|s| s.text.as_str()).collect();
    texts.join("\n---\n")
}

fn read_sources(args: &[String]) -> Result<Vec<Source>, CliError> {
    let mut out = Vec::new();
    for a in args {
        if a == "-" {
            out.push(read_stdin()?);
            continue;
        }
        for path in input::expand(Path::new(a))? {
            out.push(read_file(&path)?);
        }
    }
    Ok(out)
}

fn read_stdin() -> Result<Source, CliError> {
    let mut text = String::new();
    std::io::stdin()
        .read_to_string(&mut text)
        .map_err(|e| CliError::File {
            file: "-".into(),
            message: e.to_string(),
        })?;
    Ok(Source {
        file: "-".into(),
        text,
    })
}

fn read_file(path: &Path) -> Result<Source, CliError> {
    let file = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| CliError::File {
        file: file.clone(),
        message: e.to_string(),
    })?;
    Ok(Source { file, text })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn source(file: &str, text: &str) -> Source {
        Source {
            file: file.into(),
            text: text.into(),
        }
    }

    #[test]
    fn files_join_into_one_stream() {
        let joined = join(&[source("a", "kind: A"), source("b", "---\nkind: B\n")]);
        assert_eq!(joined, "kind: A\n---\n---\nkind: B\n");
        let out = kerf_api::migrate_documents(&joined);
        assert!(out.is_ok_and(|o| o.yaml.contains("kind: A") && o.yaml.contains("kind: B")));
    }
}
