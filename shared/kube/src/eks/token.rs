//! EKS bearer tokens: a presigned STS `GetCallerIdentity` URL (SigV4 in the query string,
//! with the `x-k8s-aws-id: <cluster>` header signed), encoded as
//! `k8s-aws-v1.` + base64url-nopad(url). This is what `aws eks get-token` produces.

use crate::error::ClusterError;
use aws_credential_types::Credentials;
use aws_sigv4::http_request::{
    SignableBody, SignableRequest, SignatureLocation, SigningSettings, sign,
};
use aws_sigv4::sign::v4;
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};
use std::time::{Duration, SystemTime};

/// Prefix of every EKS token.
pub const TOKEN_PREFIX: &str = "k8s-aws-v1.";
/// The header binding the token to one cluster.
pub const CLUSTER_ID_HEADER: &str = "x-k8s-aws-id";
/// `X-Amz-Expires` of the presigned URL, as the AWS CLI sets it.
pub const PRESIGN_EXPIRES: Duration = Duration::from_secs(60);
/// EKS accepts a token for 15 minutes; Kerf rebuilds after this much.
pub const REFRESH_AFTER: Duration = Duration::from_secs(600);

/// RFC 3986 unreserved characters stay as they are; everything else is encoded.
const QUERY: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'_')
    .remove(b'.')
    .remove(b'~');

/// A token and when it was made.
#[derive(Clone, PartialEq, Eq)]
pub struct EksToken {
    /// `k8s-aws-v1.…`.
    pub token: String,
    /// Signing time.
    pub issued_at: SystemTime,
}

impl std::fmt::Debug for EksToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EksToken")
            .field("token", &"<redacted>")
            .field("issued_at", &self.issued_at)
            .finish()
    }
}

impl EksToken {
    /// Whether the token should be replaced at `now`.
    pub fn needs_refresh(&self, now: SystemTime) -> bool {
        now.duration_since(self.issued_at)
            .map(|age| age >= REFRESH_AFTER)
            .unwrap_or(true)
    }
}

/// The STS endpoint for a region.
pub fn sts_url(region: &str) -> String {
    format!("https://sts.{region}.amazonaws.com/?Action=GetCallerIdentity&Version=2011-06-15")
}

fn fatal(e: impl std::fmt::Display) -> ClusterError {
    ClusterError::Fatal(format!("eks token: {e}"))
}

/// The presigned STS URL for `cluster` at `time`.
pub fn presigned_url(
    creds: &Credentials,
    region: &str,
    cluster: &str,
    time: SystemTime,
) -> Result<String, ClusterError> {
    let url = sts_url(region);
    let mut settings = SigningSettings::default();
    settings.signature_location = SignatureLocation::QueryParams;
    settings.expires_in = Some(PRESIGN_EXPIRES);
    let identity = creds.clone().into();
    let params = v4::SigningParams::builder()
        .identity(&identity)
        .region(region)
        .name("sts")
        .time(time)
        .settings(settings)
        .build()
        .map_err(fatal)?
        .into();
    let headers = [(CLUSTER_ID_HEADER, cluster)];
    let req = SignableRequest::new(
        "GET",
        url.as_str(),
        headers.into_iter(),
        SignableBody::Bytes(&[]),
    )
    .map_err(fatal)?;
    let (instructions, _) = sign(req, &params).map_err(fatal)?.into_parts();
    let mut out = url;
    for (k, v) in instructions.params() {
        out.push('&');
        out.push_str(k);
        out.push('=');
        out.extend(utf8_percent_encode(v, QUERY));
    }
    Ok(out)
}

/// The bearer token for `cluster` at `time`.
pub fn token(
    creds: &Credentials,
    region: &str,
    cluster: &str,
    time: SystemTime,
) -> Result<EksToken, ClusterError> {
    let url = presigned_url(creds, region, cluster, time)?;
    Ok(EksToken {
        token: format!("{TOKEN_PREFIX}{}", URL_SAFE_NO_PAD.encode(url)),
        issued_at: time,
    })
}
