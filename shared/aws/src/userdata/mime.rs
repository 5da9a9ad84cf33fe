//! MIME multipart user data: splitting the EC2NodeClass `userData` into parts and writing
//! the merged archive with Karpenter's boundary.

/// The MIME boundary Karpenter uses.
pub const BOUNDARY: &str = "//";

/// A shell script part's content type.
pub const SHELL: &str = "text/x-shellscript; charset=\"us-ascii\"";

/// A nodeadm `NodeConfig` part's content type.
pub const NODE_CONFIG: &str = "application/node.eks.aws";

/// One MIME part: its content type and body.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Part {
    pub content_type: String,
    pub body: String,
}

/// Splits user data into parts: a MIME multipart document's parts, or one part whose
/// content type `plain` chooses from the text.
pub fn user_parts(user_data: &str, plain: impl Fn(&str) -> &'static str) -> Vec<Part> {
    let trimmed = user_data.trim();
    if trimmed.is_empty() {
        return Vec::new();
    }
    if let Some(boundary) = boundary(trimmed) {
        return split(trimmed, &boundary);
    }
    vec![Part {
        content_type: plain(trimmed).into(),
        body: trimmed.to_string(),
    }]
}

fn boundary(doc: &str) -> Option<String> {
    let header_end = doc.find("\n\n").unwrap_or(doc.len());
    let headers = &doc[..header_end];
    let ct = headers.lines().find(|l| {
        l.to_ascii_lowercase()
            .starts_with("content-type: multipart/")
    })?;
    let b = ct.split("boundary=").nth(1)?;
    Some(b.trim().trim_matches('"').to_string())
}

fn split(doc: &str, boundary: &str) -> Vec<Part> {
    let delim = format!("--{boundary}");
    doc.split(&delim)
        .skip(1)
        .filter(|chunk| !chunk.starts_with("--"))
        .filter_map(|chunk| {
            let chunk = chunk.trim_start_matches(['\r', '\n']);
            let (head, body) = chunk
                .split_once("\n\n")
                .or_else(|| chunk.split_once("\r\n\r\n"))?;
            let content_type = head
                .lines()
                .find_map(|l| {
                    l.split_once(':')
                        .filter(|(k, _)| k.eq_ignore_ascii_case("content-type"))
                })
                .map(|(_, v)| v.trim().to_string())
                .unwrap_or_else(|| "text/x-shellscript".into());
            Some(Part {
                content_type,
                body: body.trim_end().to_string(),
            })
        })
        .collect()
}

/// The archive of `parts`, in order, with Karpenter's headers and boundary.
pub fn archive(parts: &[Part]) -> String {
    let mut out =
        format!("MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary=\"{BOUNDARY}\"\n\n");
    for p in parts {
        out.push_str(&format!(
            "--{BOUNDARY}\nContent-Type: {}\n\n{}\n\n",
            p.content_type, p.body
        ));
    }
    out.push_str(&format!("--{BOUNDARY}--\n"));
    out
}
