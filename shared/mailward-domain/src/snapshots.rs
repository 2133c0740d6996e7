//! DNS snapshots (SPEC §4.1 `dns-snapshots`): the values DNS served for one record type of a
//! domain, recorded by the sweep only when they change.

use serde::{Deserialize, Serialize};
use time::OffsetDateTime;
use uuid::Uuid;

/// Record types a snapshot covers (SPEC §4.1 filter values).
pub const TYPES: [&str; 8] = [
    "spf", "dmarc", "bimi", "mx", "dkim", "ns", "mta_sts", "tls_rpt",
];

/// A stored snapshot.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Snapshot {
    pub id: Uuid,
    pub domain_id: Uuid,
    /// One of [`TYPES`].
    #[serde(rename = "type")]
    pub record_type: String,
    /// The values DNS served, sorted (empty: none).
    pub values: Vec<String>,
    #[serde(with = "time::serde::rfc3339")]
    pub captured_at: OffsetDateTime,
}
