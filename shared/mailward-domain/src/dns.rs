//! The DNS resolver port.
//!
//! Results are typed so callers can tell "the record does not exist" (NXDOMAIN, or an empty
//! answer: NODATA) from "we could not find out" (SERVFAIL, timeout, refused). An audit must never
//! treat the second kind as a missing record.

use async_trait::async_trait;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// Record types Mailward asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum RecordType {
    /// IPv4 address.
    A,
    /// IPv6 address.
    Aaaa,
    /// Mail exchanger.
    Mx,
    /// Text (SPF, DMARC, DKIM, BIMI, MTA-STS, TLS-RPT).
    Txt,
    /// Canonical name.
    Cname,
    /// Name server.
    Ns,
    /// Reverse pointer.
    Ptr,
    /// Start of authority.
    Soa,
    /// DANE TLSA (RFC 6698), at `_25._tcp.<mx host>` for SMTP (RFC 7672).
    Tlsa,
    /// A DNSSEC zone key (RFC 4034): its presence at a zone's apex says the zone is signed.
    Dnskey,
}

/// One answer record's data.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RecordData {
    /// An IPv4 address.
    A(Ipv4Addr),
    /// An IPv6 address.
    Aaaa(Ipv6Addr),
    /// A mail exchanger with its preference; `exchange` is lower-case without the trailing dot.
    Mx { preference: u16, exchange: String },
    /// A TXT record's character-strings, as raw bytes (concatenate them to read the value).
    Txt(Vec<Vec<u8>>),
    /// A CNAME target, lower-case without the trailing dot.
    Cname(String),
    /// A name server, lower-case without the trailing dot.
    Ns(String),
    /// A PTR target, lower-case without the trailing dot.
    Ptr(String),
    /// The zone's primary name server (the rest of the SOA is not needed).
    Soa { mname: String },
    /// A TLSA record's four fields (RFC 6698 §2.1), as published.
    Tlsa {
        usage: u8,
        selector: u8,
        matching: u8,
        data: Vec<u8>,
    },
    /// A DNSKEY record's flags (the key itself is not needed).
    Dnskey { flags: u16 },
}

impl RecordData {
    /// The TXT value with its strings concatenated (RFC 7208 §3.3), lossily decoded.
    pub fn txt_value(&self) -> Option<String> {
        match self {
            RecordData::Txt(parts) => Some(String::from_utf8_lossy(&parts.concat()).into_owned()),
            _ => None,
        }
    }

    /// The type of record this is.
    pub fn record_type(&self) -> RecordType {
        match self {
            RecordData::A(_) => RecordType::A,
            RecordData::Aaaa(_) => RecordType::Aaaa,
            RecordData::Mx { .. } => RecordType::Mx,
            RecordData::Txt(_) => RecordType::Txt,
            RecordData::Cname(_) => RecordType::Cname,
            RecordData::Ns(_) => RecordType::Ns,
            RecordData::Ptr(_) => RecordType::Ptr,
            RecordData::Soa { .. } => RecordType::Soa,
            RecordData::Tlsa { .. } => RecordType::Tlsa,
            RecordData::Dnskey { .. } => RecordType::Dnskey,
        }
    }

    /// The address, for A and AAAA records.
    pub fn ip(&self) -> Option<IpAddr> {
        match self {
            RecordData::A(v4) => Some(IpAddr::V4(*v4)),
            RecordData::Aaaa(v6) => Some(IpAddr::V6(*v6)),
            _ => None,
        }
    }
}

/// A successful answer: possibly empty (NODATA).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Answer {
    /// Records of the asked type (after following any CNAME chain).
    pub records: Vec<RecordData>,
    /// The CNAME chain followed to reach the records, in order (empty when none).
    pub cname_chain: Vec<String>,
    /// Smallest TTL among the records, when any.
    pub ttl: Option<u32>,
}

/// Why a lookup did not produce an answer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DnsError {
    /// The name does not exist (RCODE 3). A definitive negative answer.
    #[error("NXDOMAIN")]
    NxDomain,
    /// The server failed (RCODE 2).
    #[error("SERVFAIL")]
    ServFail,
    /// The server refused to answer (RCODE 5).
    #[error("REFUSED")]
    Refused,
    /// No answer in time from any server.
    #[error("timeout")]
    Timeout,
    /// The request's query budget is spent.
    #[error("query budget exhausted")]
    BudgetExhausted,
    /// The name is not a valid DNS name.
    #[error("invalid name: {0}")]
    InvalidName(String),
    /// Any other failure (network, malformed response).
    #[error("{0}")]
    Other(String),
}

impl DnsError {
    /// True for answers that prove absence (as opposed to failures to find out).
    pub fn is_definitive(&self) -> bool {
        matches!(self, DnsError::NxDomain)
    }
}

/// The resolver port.
#[async_trait]
pub trait DnsResolver: Send + Sync {
    /// Looks up `name` (absolute or relative-to-root; a trailing dot is optional).
    /// NODATA is `Ok` with no records; NXDOMAIN is `Err(DnsError::NxDomain)`.
    async fn lookup(&self, name: &str, record_type: RecordType) -> Result<Answer, DnsError>;

    /// The same lookup, never answered from a cache: for verification and explicit refreshes,
    /// where a person just published a record (LESSONS: stale state after publishing). Adapters
    /// without a cache keep the default.
    async fn lookup_uncached(
        &self,
        name: &str,
        record_type: RecordType,
    ) -> Result<Answer, DnsError> {
        self.lookup(name, record_type).await
    }
}

/// A view of a resolver whose every lookup bypasses caches. Wrap it in a budget or pass it to an
/// engine that only knows [`DnsResolver::lookup`].
#[derive(Clone, Copy)]
pub struct Uncached<'a>(pub &'a dyn DnsResolver);

#[async_trait]
impl DnsResolver for Uncached<'_> {
    async fn lookup(&self, name: &str, record_type: RecordType) -> Result<Answer, DnsError> {
        self.0.lookup_uncached(name, record_type).await
    }
}
