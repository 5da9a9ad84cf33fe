//! Client construction from an endpoint, a CA bundle and a bearer token (client-side
//! retries off: a PodDisruptionBudget's 429 must reach the caller at once).

use crate::error::ClusterError;
use base64::Engine;
use kube::Client;
use std::time::Duration;

/// Builds a client for `endpoint` trusting the base64-encoded PEM bundle `ca_data_b64`
/// (as EKS DescribeCluster and kubeconfig `certificate-authority-data` give it).
pub fn client_for(endpoint: &str, ca_data_b64: &str, token: &str) -> Result<Client, ClusterError> {
    let fatal = |e: &dyn std::fmt::Display| ClusterError::Fatal(e.to_string());
    let mut config = kube::Config::new(endpoint.parse().map_err(|e| fatal(&e))?);
    // An empty bundle trusts nothing extra (plain HTTP to a local server, or public CAs).
    if !ca_data_b64.trim().is_empty() {
        let pem = base64::engine::general_purpose::STANDARD
            .decode(ca_data_b64.trim())
            .map_err(|e| fatal(&e))?;
        let pem = String::from_utf8(pem).map_err(|e| fatal(&e))?;
        config.root_cert = Some(pem_certificates(&pem).map_err(|e| fatal(&e))?);
    }
    config.auth_info.token = Some(secrecy::SecretString::from(token.to_string()));
    config.default_retry = false;
    config.connect_timeout = Some(Duration::from_secs(10));
    config.read_timeout = Some(Duration::from_secs(60));
    Client::try_from(config).map_err(|e| fatal(&e))
}

/// DER bodies of every certificate in a PEM bundle.
pub fn pem_certificates(pem: &str) -> Result<Vec<Vec<u8>>, base64::DecodeError> {
    let mut out = Vec::new();
    let mut current: Option<String> = None;
    for line in pem.lines().map(str::trim) {
        if line.starts_with("-----BEGIN") {
            current = Some(String::new());
        } else if line.starts_with("-----END") {
            if let Some(b64) = current.take() {
                out.push(base64::engine::general_purpose::STANDARD.decode(b64)?);
            }
        } else if let Some(buf) = current.as_mut() {
            buf.push_str(line);
        }
    }
    Ok(out)
}
