//! DKIM keys Mailward hosts for a domain (SPEC §2.7): the customer publishes
//! `<selector>._domainkey.<domain>` as a CNAME to `<selector>._domainkey.<domain>.<hosted zone>`,
//! where Mailward serves the key (TXT) or the sending service's key host (CNAME).

use serde::{Deserialize, Serialize};
use time::OffsetDateTime;
use uuid::Uuid;

/// How the key is served.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "UPPERCASE")]
pub enum DkimRecordType {
    /// The key record itself (`v=DKIM1; k=…; p=…`).
    Txt,
    /// A CNAME to the sending service's key host.
    Cname,
}

/// SPEC §2.7 `dns_status`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "lowercase")]
pub enum DkimDnsStatus {
    /// Not published yet.
    #[default]
    Unknown,
    /// Served by Mailward; the customer's CNAME is not seen in live DNS yet.
    Syncing,
    /// Served, and the customer's CNAME points at it.
    Ready,
    /// Publishing failed (`publish_error` says why).
    Error,
}

/// A hosted DKIM key as stored.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DkimKey {
    pub id: Uuid,
    pub org_id: Uuid,
    pub domain_id: Uuid,
    /// The selector, lowercase.
    pub selector: String,
    pub record_type: DkimRecordType,
    pub value: String,
    pub ttl: Option<u32>,
    pub dns_status: DkimDnsStatus,
    pub publish_error: Option<String>,
    /// Who created it: an account id or an API key id.
    pub created_by: Option<String>,
    #[serde(with = "time::serde::rfc3339")]
    pub created_at: OffsetDateTime,
    #[serde(with = "time::serde::rfc3339")]
    pub updated_at: OffsetDateTime,
    #[serde(with = "time::serde::rfc3339::option")]
    pub last_published_at: Option<OffsetDateTime>,
    #[serde(with = "time::serde::rfc3339::option")]
    pub deleted_at: Option<OffsetDateTime>,
}

/// The name Mailward serves a key at.
pub fn hosted_name(selector: &str, domain: &str, hosted_zone: &str) -> String {
    format!(
        "{}._domainkey.{}.{}",
        crate::hosted_zone::normalize(selector),
        crate::hosted_zone::normalize(domain),
        crate::hosted_zone::normalize(hosted_zone)
    )
}
