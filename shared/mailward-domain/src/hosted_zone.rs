//! The hosted-zone port: the DNS records Mailward itself serves, behind customers' CNAMEs
//! (hosted DMARC at `<owner>._dmarc.<hosted zone>`) and for its own report mailbox (the
//! RFC 9989 report-destination authorization `<domain>._report._dmarc.<report host>`).
//!
//! Adapters: Route 53 on AWS (`mailward-aws`); on the local stack the records live in the item
//! store and an embedded authoritative server answers for them (`--dns-listen`).

use async_trait::async_trait;

/// The record types Mailward serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ZoneRecordKind {
    Txt,
    Cname,
}

impl ZoneRecordKind {
    /// The RR type's name.
    pub fn as_str(self) -> &'static str {
        match self {
            ZoneRecordKind::Txt => "TXT",
            ZoneRecordKind::Cname => "CNAME",
        }
    }
}

/// One record set: every value of one type at one name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ZoneRecord {
    /// The absolute owner name, lowercase, without the trailing dot.
    pub name: String,
    pub kind: ZoneRecordKind,
    /// TXT strings (each one record; long ones are split into 255-byte strings by the
    /// adapter) or the one CNAME target.
    pub values: Vec<String>,
    /// Time to live, in seconds.
    pub ttl: u32,
}

impl ZoneRecord {
    /// A TXT record set with one value.
    pub fn txt(name: &str, value: &str, ttl: u32) -> Self {
        Self {
            name: normalize(name),
            kind: ZoneRecordKind::Txt,
            values: vec![value.to_owned()],
            ttl,
        }
    }

    /// A CNAME record set.
    pub fn cname(name: &str, target: &str, ttl: u32) -> Self {
        Self {
            name: normalize(name),
            kind: ZoneRecordKind::Cname,
            values: vec![normalize(target)],
            ttl,
        }
    }
}

/// The owner part of every name Mailward serves for one domain of one organization:
/// `<12 hex of the domain id>.<domain>`. Two organizations watching the same domain name get
/// different names, so neither can overwrite what is served for the other; the customer's
/// CNAME decides which one is live.
pub fn owner_name(domain_id: uuid::Uuid, domain: &str) -> String {
    let id = domain_id.simple().to_string();
    format!("{}.{}", &id[..12], normalize(domain))
}

/// Lowercase, without the trailing dot: the form names are stored and compared in.
pub fn normalize(name: &str) -> String {
    name.trim().trim_end_matches('.').to_ascii_lowercase()
}

/// Why a change did not apply.
#[derive(Debug, thiserror::Error)]
pub enum ZoneError {
    /// The provider throttled us and retries ran out: try again later.
    #[error("the DNS provider is throttling changes: {0}")]
    Throttled(String),
    /// The provider refused the change (a name outside the zone, an invalid value).
    #[error("the DNS provider refused the change: {0}")]
    Rejected(String),
    /// The provider or the store could not be reached.
    #[error("the hosted zone is unavailable: {0}")]
    Unavailable(String),
}

/// The hosted-zone port. Changes are idempotent: upserting what is there, or removing what is
/// not, succeeds.
#[async_trait]
pub trait HostedZone: Send + Sync {
    /// Creates or replaces record sets, all or none where the provider allows.
    async fn upsert(&self, records: &[ZoneRecord]) -> Result<(), ZoneError>;

    /// Removes the record sets of these names and types.
    async fn remove(&self, keys: &[(String, ZoneRecordKind)]) -> Result<(), ZoneError>;

    /// The record sets served at `name`.
    async fn records(&self, name: &str) -> Result<Vec<ZoneRecord>, ZoneError>;
}
