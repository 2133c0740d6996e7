//! The `dns` and `api_key_dns` buckets (SPEC §8.1) for endpoints that resolve DNS during the
//! request. Take [`DnsQuota`] after the credential extractor.

use crate::auth::{Credential, ResolvedAuth};
use crate::error::ApiError;
use crate::middleware::ClientIp;
use crate::rate_limit::enforce;
use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use mailward_services::AppState;
use mailward_services::config::Scope;

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
                (mailward_domain::rate_limits::client_subject(&ip), false)
            }
        };
        enforce(state, parts, Scope::Dns, &subject).await?;
        if api_key {
            enforce(state, parts, Scope::ApiKeyDns, &subject).await?;
        }
        Ok(DnsQuota)
    }
}
