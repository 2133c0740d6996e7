//! The tags of a DKIM-Signature or ARC header (RFC 6376 §3.2 tag lists), for display; the
//! verification itself is the cryptography crate's.

use serde::Serialize;

/// The tags of one signature (the signature value `b=` left out).
#[derive(Debug, Clone, Default, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct SignatureTags {
    /// `d=`: the signing domain.
    pub domain: Option<String>,
    /// `s=`: the selector.
    pub selector: Option<String>,
    /// `a=`: the algorithm (`rsa-sha256`, `ed25519-sha256`).
    pub algorithm: Option<String>,
    /// `c=`: header/body canonicalization (default `simple/simple`).
    pub canonicalization: String,
    /// `h=`: the signed header fields.
    pub signed_headers: Vec<String>,
    /// `l=`: the body length signed, when limited.
    pub body_length: Option<u64>,
    /// `i=`: the agent or user identifier (DKIM), or the instance (ARC).
    pub identity: Option<String>,
    /// ARC instance (`i=` of ARC headers).
    pub instance: Option<u32>,
    /// `t=`: signing time (Unix seconds).
    pub timestamp: Option<i64>,
    /// `x=`: expiry (Unix seconds).
    pub expiration: Option<i64>,
}

/// Reads a signature header's value.
pub fn signature_tags(raw_value: &str) -> SignatureTags {
    let mut tags = SignatureTags {
        canonicalization: "simple/simple".into(),
        ..SignatureTags::default()
    };
    for pair in raw_value.split(';') {
        let Some((k, v)) = pair.split_once('=') else {
            continue;
        };
        let key = k.trim().to_ascii_lowercase();
        let value: String = v.chars().filter(|c| !c.is_whitespace()).collect();
        match key.as_str() {
            "d" => tags.domain = Some(value.to_ascii_lowercase()),
            "s" => tags.selector = Some(value),
            "a" => tags.algorithm = Some(value.to_ascii_lowercase()),
            "c" => {
                tags.canonicalization = if value.contains('/') {
                    value.to_ascii_lowercase()
                } else {
                    format!("{}/simple", value.to_ascii_lowercase())
                }
            }
            "h" => {
                tags.signed_headers = value
                    .split(':')
                    .filter(|h| !h.is_empty())
                    .map(str::to_ascii_lowercase)
                    .collect()
            }
            "l" => tags.body_length = value.parse().ok(),
            "i" => {
                tags.instance = value.parse().ok();
                tags.identity = Some(value);
            }
            "t" => tags.timestamp = value.parse().ok(),
            "x" => tags.expiration = value.parse().ok(),
            _ => {}
        }
    }
    tags
}
