//! `kerf webhooks`: the Validating and Mutating WebhookConfigurations that send the API
//! server's admission requests to Kerf's webhook function, rendered from the stack's outputs
//! (what `aws cloudformation describe-stacks --query 'Stacks[0].Outputs'` prints, or the
//! whole describe-stacks document) and the webhook's path secret, as YAML for
//! `kubectl apply -f -`. The configurations themselves are in [`config`] (beside the handler they route to).

pub use kerf_control::webhook::config;

use std::collections::BTreeMap;

use serde_json::Value;

use crate::args::WebhooksArgs;
use crate::commands::Outcome;
use crate::error::CliError;

/// The outputs the configurations are rendered from.
pub const WEBHOOK_URL: &str = "WebhookUrl";
/// Optional: recorded on the configurations so `kubectl get` shows which cluster's stack.
pub const CLUSTER_NAME: &str = "ClusterName";

/// The stack outputs of one file, by key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StackOutputs {
    pub file: String,
    pub values: BTreeMap<String, String>,
}

impl StackOutputs {
    /// Parses the outputs list (`[{OutputKey, OutputValue}, …]`), a stack (`{Outputs: […]}`)
    /// or a describe-stacks document (`{Stacks: [{Outputs: […]}]}`, the first stack).
    pub fn parse(file: &str, text: &str) -> Result<StackOutputs, CliError> {
        let bad = |message: String| CliError::File {
            file: file.to_string(),
            message,
        };
        let doc: Value = serde_json::from_str(text).map_err(|e| bad(format!("not JSON: {e}")))?;
        let list = match &doc {
            Value::Array(_) => &doc,
            Value::Object(o) if o.contains_key("Stacks") => &doc["Stacks"][0]["Outputs"],
            Value::Object(_) => &doc["Outputs"],
            _ => &Value::Null,
        };
        let items = list.as_array().ok_or_else(|| {
            bad("expected the stack outputs: a list of {OutputKey, OutputValue}".into())
        })?;
        let mut values = BTreeMap::new();
        for (i, item) in items.iter().enumerate() {
            let (Some(k), Some(v)) = (item["OutputKey"].as_str(), item["OutputValue"].as_str())
            else {
                return Err(bad(format!(
                    "output {} has no OutputKey and OutputValue strings",
                    i + 1
                )));
            };
            values.insert(k.to_string(), v.to_string());
        }
        Ok(StackOutputs {
            file: file.to_string(),
            values,
        })
    }

    /// An output that must be present and non-empty.
    pub fn required(&self, key: &str) -> Result<&str, CliError> {
        self.values
            .get(key)
            .map(String::as_str)
            .filter(|v| !v.is_empty())
            .ok_or_else(|| CliError::File {
                file: self.file.clone(),
                message: format!("missing output {key} (is this the Kerf stack's outputs?)"),
            })
    }
}

/// The webhook secret's value: the current secret and, while it rotates, the next one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Secrets {
    pub current: String,
    pub next: Option<String>,
}

/// Reads the secrets from `file` (`-`: stdin): one secret of URL-safe characters, or two (the
/// current one, then the next one) separated by whitespace while the secret rotates.
pub fn read_secrets(file: &str, text: &str) -> Result<Secrets, CliError> {
    let bad = |message: &str| CliError::File {
        file: file.to_string(),
        message: message.to_string(),
    };
    let url_safe = |c: char| c.is_ascii_alphanumeric() || "-._~".contains(c);
    let tokens: Vec<&str> = text.split_whitespace().collect();
    if tokens.iter().any(|t| !t.chars().all(url_safe)) {
        return Err(bad(
            "the webhook secret must be one line of letters, digits, '-', '.', '_' or '~' \
             (the current and the next secret separated by a space while it rotates)",
        ));
    }
    match tokens.as_slice() {
        [] => Err(bad("the webhook secret is empty")),
        [current] => Ok(Secrets {
            current: current.to_string(),
            next: None,
        }),
        [current, next] => Ok(Secrets {
            current: current.to_string(),
            next: Some(next.to_string()),
        }),
        _ => Err(bad(
            "the webhook secret holds at most two secrets: the current one and the next one",
        )),
    }
}

/// The secret the configurations carry: the current one, or with `rotate` the next one.
pub fn chosen(secrets: Secrets, rotate: bool) -> Result<String, CliError> {
    match (rotate, secrets.next) {
        (false, _) => Ok(secrets.current),
        (true, Some(next)) => Ok(next),
        (true, None) => Err(CliError::Usage(
            "--rotate needs the secret to hold the current and the next secret, separated by \
             a space (see the README's rotation steps)"
                .into(),
        )),
    }
}

fn read(file: &str) -> Result<String, CliError> {
    let text = if file == "-" {
        std::io::read_to_string(std::io::stdin())
    } else {
        std::fs::read_to_string(file)
    };
    text.map_err(|e| CliError::File {
        file: file.to_string(),
        message: e.to_string(),
    })
}

/// `https://<host>/<secret>/admit` from the Function URL output.
pub fn webhook_url(outputs: &StackOutputs, secret: &str) -> Result<String, CliError> {
    let base = outputs.required(WEBHOOK_URL)?;
    if !base.starts_with("https://") {
        return Err(CliError::File {
            file: outputs.file.clone(),
            message: format!("output {WEBHOOK_URL} is not an https URL: {base}"),
        });
    }
    Ok(format!("{}/{secret}/admit", base.trim_end_matches('/')))
}

/// Renders both configurations as one YAML stream.
pub fn render(outputs: &StackOutputs, secret: &str) -> Result<String, CliError> {
    let url = webhook_url(outputs, secret)?;
    let cluster = outputs.values.get(CLUSTER_NAME).map(String::as_str);
    let mut out = String::new();
    for doc in config::configurations(&url, cluster) {
        let yaml = yaml_serde::to_string(&doc).map_err(|e| CliError::Internal(e.to_string()))?;
        out.push_str("---\n");
        out.push_str(&yaml);
    }
    Ok(out)
}

/// `kerf webhooks`.
pub fn webhooks(a: &WebhooksArgs) -> Result<Outcome, CliError> {
    if a.stack_outputs == "-" && a.secret_file == "-" {
        return Err(CliError::Usage(
            "--stack-outputs and --secret-file cannot both read stdin".into(),
        ));
    }
    let outputs = StackOutputs::parse(&a.stack_outputs, &read(&a.stack_outputs)?)?;
    let secrets = read_secrets(&a.secret_file, &read(&a.secret_file)?)?;
    let secret = chosen(secrets, a.rotate)?;
    Ok(Outcome {
        stdout: render(&outputs, &secret)?,
        ..Outcome::default()
    })
}
