//! The MTA-STS policy fetch of the audit, through the outbound-safe client: `GET
//! https://mta-sts.<domain>/.well-known/mta-sts.txt`, no redirects (RFC 8461 §3.3), `text/plain`
//! only, a 64 KiB cap, the outbound time limit, private addresses refused at connect time.

use crate::state::AppState;
use async_trait::async_trait;
use mailward_audit::{FetchError, PolicyFetcher};

/// Largest policy body read (RFC 8461 policies are a few hundred bytes).
pub const MAX_POLICY_BYTES: usize = 64 * 1024;

/// [`PolicyFetcher`] over the service's outbound client.
pub struct OutboundPolicyFetcher<'a> {
    /// Application state (for the client and its policy).
    pub app: &'a AppState,
}

fn classify(e: &reqwest::Error) -> FetchError {
    if e.is_timeout() {
        return FetchError::Timeout;
    }
    let mut chain = String::new();
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        if s.downcast_ref::<super::client::Refused>().is_some() {
            return FetchError::Refused;
        }
        chain.push_str(&s.to_string().to_ascii_lowercase());
        chain.push(' ');
        source = s.source();
    }
    if chain.contains("certificate") || chain.contains("tls") || chain.contains("handshake") {
        FetchError::Tls
    } else if chain.contains("lookup")
        || chain.contains("resolve")
        || chain.contains("name or service")
    {
        FetchError::NotFound
    } else if e.is_connect() {
        FetchError::Refused
    } else {
        FetchError::Other(chain.trim().chars().take(200).collect())
    }
}

#[async_trait]
impl PolicyFetcher for OutboundPolicyFetcher<'_> {
    async fn fetch_mta_sts_policy(&self, domain: &str) -> Result<String, FetchError> {
        let client = self.app.outbound_client().map_err(FetchError::Other)?;
        let url = format!("https://mta-sts.{domain}/.well-known/mta-sts.txt");
        let mut response = client.get(&url).send().await.map_err(|e| classify(&e))?;
        let status = response.status().as_u16();
        match status {
            200 => {}
            404 => return Err(FetchError::NotFound),
            300..=399 => {
                return Err(FetchError::Other(format!(
                    "HTTP {status}: redirects are not followed (RFC 8461 §3.3)"
                )));
            }
            other => return Err(FetchError::Http(other)),
        }
        let content_type = response
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_ascii_lowercase();
        if !content_type.starts_with("text/plain") {
            return Err(FetchError::Other(format!(
                "content type {content_type:?} is not text/plain (RFC 8461 §3.2)"
            )));
        }
        let mut body = Vec::new();
        while let Some(chunk) = response.chunk().await.map_err(|e| classify(&e))? {
            if body.len() + chunk.len() > MAX_POLICY_BYTES {
                return Err(FetchError::TooLarge);
            }
            body.extend_from_slice(&chunk);
        }
        String::from_utf8(body).map_err(|_| FetchError::Other("the policy is not UTF-8".into()))
    }
}
