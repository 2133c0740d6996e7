//! The `dns` and `api_key_dns` buckets (SPEC §8.1) for endpoints that resolve DNS during the
//! request. Take [`DnsQuota`] after the credential extractor.

use crate::auth::{Credential, ResolvedAuth};
use crate::config::Scope;
use crate::error::ApiError;
use crate::middleware::ClientIp;
use crate::rate_limit::enforce;
use crate::state::AppState;
use axum::extract::FromRequestParts;
use axum::http::request::Parts;

/// Proof that the request was counted in the DNS buckets and is within them.
#[derive(Debug, Clone, Copy)]
pub struct DnsQuota;

impl FromRequestParts<AppState> for DnsQuota {
    type Rejection = ApiError;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &AppState,
    ) -> Result<Self, Self::Rejection> {
        let (subject, api_key) = match parts.extensions.get::<ResolvedAuth>() {
            Some(ResolvedAuth::Valid {
                credential: Credential::ApiKey { key_id, .. },
                ..
            }) => (format!("key:{key_id}"), true),
            Some(ResolvedAuth::Valid {
                credential: Credential::Session { account_id, .. },
                ..
            }) => (format!("sub:{account_id}"), false),
            _ => {
                let ip = parts
                    .extensions
                    .get::<ClientIp>()
                    .map_or_else(|| "unknown".to_owned(), |c| c.0.clone());
                (format!("ip:{ip}"), false)
            }
        };
        enforce(state, parts, Scope::Dns, &subject).await?;
        if api_key {
            enforce(state, parts, Scope::ApiKeyDns, &subject).await?;
        }
        Ok(DnsQuota)
    }
}

/// Normalises a domain name parameter: trims, drops one trailing dot, IDNA to ASCII, lower case,
/// 1-253 characters, labels of 1-63 letters, digits, hyphens or underscores. Anything else is 400
/// naming `param`.
pub fn normalize_domain(param: &'static str, raw: &str) -> Result<String, ApiError> {
    let bad = || {
        ApiError::invalid_param(
            param,
            format!("{param} must be a domain name such as example.com"),
        )
    };
    let trimmed = raw.trim();
    let trimmed = trimmed.strip_suffix('.').unwrap_or(trimmed);
    if trimmed.is_empty() || trimmed.len() > 253 || trimmed.contains("..") {
        return Err(bad());
    }
    let ascii = match url::Host::parse(trimmed) {
        Ok(url::Host::Domain(d)) => d.to_ascii_lowercase(),
        Ok(_) => return Err(bad()),
        Err(_)
            if trimmed
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_' || b == b'.') =>
        {
            trimmed.to_ascii_lowercase()
        }
        _ => return Err(bad()),
    };
    let labels_ok = ascii.split('.').all(|label| {
        !label.is_empty()
            && label.len() <= 63
            && label
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
    });
    if !labels_ok || ascii.len() > 253 || !ascii.contains('.') {
        return Err(bad());
    }
    Ok(ascii)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn domains_are_normalised_or_refused() {
        assert_eq!(
            normalize_domain("domain", " Example.COM. ").unwrap(),
            "example.com"
        );
        assert_eq!(
            normalize_domain("domain", "_dmarc.example.com").unwrap(),
            "_dmarc.example.com"
        );
        assert_eq!(
            normalize_domain("domain", "bücher.de").unwrap(),
            "xn--bcher-kva.de"
        );
        for bad in [
            "",
            ".",
            "localhost",
            "a..b.com",
            "exa mple.com",
            "http://example.com",
            "1.2.3.4",
            &"a".repeat(64),
            "x@y.com",
        ] {
            let e = normalize_domain("domain", bad).unwrap_err();
            assert_eq!(e.param.as_deref(), Some("domain"), "{bad}");
        }
    }
}
