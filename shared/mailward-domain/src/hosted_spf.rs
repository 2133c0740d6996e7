//! Hosted SPF (SPEC §1.2 "SPF with flattening"): what Mailward last flattened for a domain and
//! serves in its zone, kept beside the domain so the hourly re-flattening can tell when a
//! sending service's ranges changed.

use serde::{Deserialize, Serialize};
use time::OffsetDateTime;
use uuid::Uuid;

/// How many range changes are remembered per domain.
pub const MAX_REMEMBERED_CHANGES: usize = 20;

/// One record of the served chain.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServedSpfRecord {
    /// Where it is served, in the hosted zone.
    pub name: String,
    /// The TXT value.
    pub value: String,
}

/// A term of the source record that authorizes senders through DNS, and what flattening
/// made of it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SpfSourceTerm {
    /// `include:_spf.example.com`, `a:example.com`, `mx:example.com`.
    pub term: String,
    /// Its networks are served instead of the term.
    pub flattened: bool,
    /// Lookups the term costs served as itself.
    pub lookups: u32,
    /// The networks it authorizes (`ip4:`/`ip6:` terms), empty when it cannot be flattened.
    pub networks: Vec<String>,
    /// Why it is served as itself, when it cannot be flattened.
    pub note: Option<String>,
    /// When a re-flattening last found its networks changed.
    #[serde(default, with = "time::serde::rfc3339::option")]
    pub changed_at: Option<OffsetDateTime>,
}

/// One observed change of a term's networks.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SpfRangeChange {
    /// The term whose networks changed.
    pub term: String,
    /// When the re-flattening saw it.
    #[serde(with = "time::serde::rfc3339")]
    pub at: OffsetDateTime,
    /// Networks that appeared.
    pub added: Vec<String>,
    /// Networks that went away.
    pub removed: Vec<String>,
}

/// A domain's hosted SPF as last flattened and published.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HostedSpf {
    /// The owning organization.
    pub org_id: Uuid,
    /// The domain.
    pub domain_id: Uuid,
    /// The record that was flattened (`target_spf`, or the domain's record when hosting began
    /// merged with its confirmed senders).
    pub source: String,
    /// What the customer publishes at the domain.
    pub customer_record: String,
    /// The served chain, first record first.
    pub records: Vec<ServedSpfRecord>,
    /// The source's terms.
    pub terms: Vec<SpfSourceTerm>,
    /// Lookups a receiver makes evaluating the customer's record.
    pub lookups: u32,
    /// `spf_options.force_flattening` when it was flattened.
    pub forced: bool,
    /// When it was last flattened.
    #[serde(with = "time::serde::rfc3339")]
    pub flattened_at: OffsetDateTime,
    /// Recent range changes, newest first.
    #[serde(default)]
    pub changes: Vec<SpfRangeChange>,
}
