//! The plain data [`detect`](crate::detect) returns: the REST shape of SPEC §2.2 minus the
//! occurrence count and detection times, which the caller keeps.

use serde::{Deserialize, Serialize};

/// The protocol a conflicting label belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Protocol {
    /// `_dmarc.<domain>`.
    Dmarc,
    /// The apex TXT (`v=spf1`).
    Spf,
    /// `default._bimi.<domain>`.
    Bimi,
    /// `_mta-sts.<domain>`.
    MtaSts,
    /// `<selector>._domainkey.<domain>`.
    Dkim,
}

/// What is wrong at a label.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ConflictKind {
    /// A CNAME and other records at one name.
    CnameWithOtherData,
    /// More than one `v=DMARC1` record.
    MultipleDmarcRecords,
    /// More than one `v=spf1` record.
    MultipleSpfRecords,
    /// More than one `v=BIMI1` record.
    MultipleBimiRecords,
    /// The CNAME chain ends in a name that does not exist.
    CnameTargetUnresolvable,
    /// The CNAME chain is longer than allowed, or loops.
    CnameChainTooDeep,
    /// The zone's authoritative nameservers answer differently.
    AuthoritativeDisagreement,
    /// Public resolvers answer differently from each other or from the authoritative servers.
    ResolverDivergence,
    /// A record Mailward hosts is not (or no longer) delegated to it by CNAME.
    ManagedDelegationMissing,
}

/// What one authoritative nameserver answered for the label.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NameserverAnswer {
    /// The nameserver's host name (from the zone's NS records).
    pub nameserver: String,
    /// The address asked.
    pub ip: String,
    /// CNAME targets at the label.
    pub cname: Vec<String>,
    /// TXT values at the label (strings concatenated).
    pub txt: Vec<String>,
    /// True when the server gave a definitive answer (records, NODATA or NXDOMAIN).
    pub answered: bool,
    /// True when the server did not answer in time.
    pub timed_out: bool,
}

/// What one configured public resolver answered for the label.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ResolverAnswer {
    /// The resolver's configured name.
    pub resolver: String,
    /// The address asked.
    pub ip: String,
    /// CNAME targets at the label.
    pub cname: Vec<String>,
    /// TXT values for the label (after the resolver followed any CNAME).
    pub txt: Vec<String>,
    /// True when the resolver gave a definitive answer (records, NODATA or NXDOMAIN).
    pub answered: bool,
    /// True when the resolver did not answer in time.
    pub timed_out: bool,
}

/// One detected conflict (SPEC §2.2 without `occurrence_count`, `first_detected_at`,
/// `last_detected_at`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Conflict {
    /// The exact DNS name of the conflict, lower-case without the trailing dot.
    pub label: String,
    /// The protocol of the label.
    pub protocol: Protocol,
    /// What is wrong.
    pub kind: ConflictKind,
    /// One sentence describing the conflict.
    pub summary: String,
    /// The violated clause.
    pub rfc: String,
    /// What happens to mail because of it.
    pub consequence: String,
    /// What the customer should change.
    pub remediation: String,
    /// The conflicting records, verbatim.
    pub conflicting_records: Vec<String>,
    /// Every authoritative nameserver's answer for the label.
    pub authoritative_nameservers: Vec<NameserverAnswer>,
    /// Every configured public resolver's answer for the label.
    pub public_resolvers: Vec<ResolverAnswer>,
}
