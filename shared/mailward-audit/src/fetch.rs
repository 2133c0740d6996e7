//! The MTA-STS policy fetch port.
//!
//! Why a trait: the audit must not own an HTTP client. The service implements it with its
//! outbound-safe HTTPS client (https only, no redirects, time and size limits, private addresses
//! refused; DESIGN §7) against `https://mta-sts.<domain>/.well-known/mta-sts.txt`; tests use a
//! double.

use async_trait::async_trait;
use serde::{Deserialize, Serialize};

/// Why a policy could not be fetched. Each variant maps to one MTA-STS code (see
/// [`crate::mta_sts`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(
    feature = "openapi",
    schema(
        as = MtaStsFetchError,
        description = "Why the MTA-STS policy could not be fetched."
    )
)]
#[serde(rename_all = "camelCase")]
pub enum FetchError {
    /// The host does not exist, or the server answered 404.
    #[error("policy not found")]
    NotFound,
    /// Any other non-200 status.
    #[error("HTTP status {0}")]
    Http(u16),
    /// No complete answer in time.
    #[error("timeout")]
    Timeout,
    /// The TLS handshake failed or the certificate is not valid for the host.
    #[error("TLS error")]
    Tls,
    /// The connection was refused (including addresses the outbound client refuses to reach).
    #[error("connection refused")]
    Refused,
    /// The body exceeded the size limit.
    #[error("policy too large")]
    TooLarge,
    /// Anything else (redirects, wrong content type, decoding).
    #[error("{0}")]
    Other(String),
}

/// Fetches a domain's MTA-STS policy body.
#[async_trait]
pub trait PolicyFetcher: Send + Sync {
    /// The body of `https://mta-sts.<domain>/.well-known/mta-sts.txt`, decoded as text.
    async fn fetch_mta_sts_policy(&self, domain: &str) -> Result<String, FetchError>;
}
