//! Record discovery at `_dmarc.<domain>` (RFC 9989 §4.10 steps 1-2 for one name).
//!
//! Why a separate step from the tree walk: Mailward audits and verifies the record a domain
//! publishes itself (hosted by CNAME delegation or as plain TXT), and needs to say exactly what
//! is wrong with it: missing, several `v=DMARC1` records (which means no DMARC policy at all),
//! unusable, delegated through which CNAME, or unknown because DNS failed.
//!
//! CNAME handling: the resolver follows CNAME chains for TXT queries and reports the chain; the
//! last element is the delegation target. When the TXT lookup finds nothing, one extra CNAME
//! query tells a dangling delegation (CNAME present, target without a record) from no record.

use crate::names::{DnsFailure, fold_nxdomain, normalize_domain};
use crate::parse::{DmarcRecord, parse_txt};
use mailward_domain::dns::{DnsResolver, RecordData, RecordType};
use serde::Serialize;

/// The outcome of looking for a domain's own DMARC record.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DiscoveryStatus {
    /// Exactly one `v=DMARC1` record (see its own status for usability).
    Found,
    /// No `v=DMARC1` record (NXDOMAIN, NODATA or only unrelated TXT).
    NoRecord,
    /// More than one `v=DMARC1` record: no DMARC policy applies (code `multiple_records`).
    MultipleRecords,
    /// The lookup failed; absence is not known.
    LookupFailed,
}

impl DiscoveryStatus {
    /// Stable snake_case code for the audit (`found`, `no_record`, `multiple_records`,
    /// `lookup_failed`); the service maps them to `dmarc_record_missing`, `dmarc_multiple_records`.
    pub fn code(self) -> &'static str {
        match self {
            DiscoveryStatus::Found => "found",
            DiscoveryStatus::NoRecord => "no_record",
            DiscoveryStatus::MultipleRecords => "multiple_records",
            DiscoveryStatus::LookupFailed => "lookup_failed",
        }
    }
}

/// A CNAME delegation of `_dmarc.<domain>` (how Mailward hosts DMARC).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CnameDelegation {
    /// The CNAME targets followed, in order.
    pub chain: Vec<String>,
    /// The final target (where the record lives, or should live).
    pub target: String,
}

impl CnameDelegation {
    /// True when the final target is `suffix` or under it (for example Mailward's DMARC host
    /// zone), so the caller can tell its own delegation from someone else's.
    pub fn points_into(&self, suffix: &str) -> bool {
        let suffix = suffix.trim_end_matches('.').to_ascii_lowercase();
        self.target == suffix || self.target.ends_with(&format!(".{suffix}"))
    }
}

/// Everything learnt about the record at `_dmarc.<domain>`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RecordDiscovery {
    /// The domain asked about (normalized).
    pub domain: String,
    /// The name queried (`_dmarc.<domain>`).
    pub query_name: String,
    /// The outcome.
    pub status: DiscoveryStatus,
    /// The record, when exactly one was found.
    pub record: Option<DmarcRecord>,
    /// Number of `v=DMARC1` records at the name (reported for `multiple_records`).
    pub dmarc_record_count: usize,
    /// Every `v=DMARC1` record found (more than one only for `multiple_records`).
    pub records: Vec<DmarcRecord>,
    /// TXT records at the name that are not DMARC records but mention DMARC (for example
    /// `p=reject; v=DMARC1` or `v=dmarc1`): explains "you have a record no receiver reads".
    pub near_misses: Vec<DmarcRecord>,
    /// Total TXT records at the name.
    pub txt_record_count: usize,
    /// True when the answer came through a CNAME.
    pub via_cname: bool,
    /// The CNAME delegation, when the answer came through one, or when a CNAME exists whose
    /// target has no TXT record (then `status` is `no_record` and `dangling_cname` is true).
    pub cname: Option<CnameDelegation>,
    /// True when `_dmarc.<domain>` is a CNAME whose target answered with no DMARC record.
    pub dangling_cname: bool,
    /// Smallest TTL of the answer.
    pub ttl: Option<u32>,
    /// The failure, for `lookup_failed`.
    pub failure: Option<DnsFailure>,
}

/// Looks up and parses the DMARC record published at `_dmarc.<domain>` (no tree walk).
pub async fn discover_record(resolver: &dyn DnsResolver, domain: &str) -> RecordDiscovery {
    let normalized = normalize_domain(domain);
    let domain_name = normalized
        .clone()
        .unwrap_or_else(|| domain.trim().to_ascii_lowercase());
    let query_name = format!("_dmarc.{domain_name}");
    let mut out = RecordDiscovery {
        domain: domain_name,
        query_name: query_name.clone(),
        status: DiscoveryStatus::NoRecord,
        record: None,
        dmarc_record_count: 0,
        records: Vec::new(),
        near_misses: Vec::new(),
        txt_record_count: 0,
        via_cname: false,
        cname: None,
        dangling_cname: false,
        ttl: None,
        failure: None,
    };
    if normalized.is_none() || normalize_domain(&query_name).is_none() {
        out.status = DiscoveryStatus::LookupFailed;
        out.failure = Some(DnsFailure::InvalidName);
        return out;
    }
    let answer = match fold_nxdomain(resolver.lookup(&query_name, RecordType::Txt).await) {
        Ok(answer) => answer,
        Err(failure) => {
            out.status = DiscoveryStatus::LookupFailed;
            out.failure = Some(failure);
            return out;
        }
    };
    if let Some(answer) = &answer {
        out.ttl = answer.ttl;
        if let Some(target) = answer.cname_chain.last() {
            out.via_cname = true;
            out.cname = Some(CnameDelegation {
                chain: answer.cname_chain.clone(),
                target: target.clone(),
            });
        }
        for data in &answer.records {
            let RecordData::Txt(strings) = data else {
                continue;
            };
            out.txt_record_count += 1;
            let parsed = parse_txt(strings);
            if parsed.is_dmarc() {
                out.records.push(parsed);
            } else if parsed.raw.to_ascii_lowercase().contains("dmarc") {
                out.near_misses.push(parsed);
            }
        }
    }
    out.dmarc_record_count = out.records.len();
    out.status = match out.records.len() {
        0 => DiscoveryStatus::NoRecord,
        1 => DiscoveryStatus::Found,
        _ => DiscoveryStatus::MultipleRecords,
    };
    if out.status == DiscoveryStatus::Found {
        out.record = out.records.first().cloned();
    }
    if out.status == DiscoveryStatus::NoRecord && out.cname.is_none() {
        // A delegation whose target has no record (or does not exist) is invisible in the TXT
        // answer; ask for the CNAME itself. A failure here leaves the verdict as no_record:
        // the TXT answer already proved there is no record.
        if let Ok(Some(answer)) =
            fold_nxdomain(resolver.lookup(&query_name, RecordType::Cname).await)
        {
            let chain: Vec<String> = answer
                .records
                .iter()
                .filter_map(|r| match r {
                    RecordData::Cname(target) => Some(target.clone()),
                    _ => None,
                })
                .collect();
            if let Some(target) = chain.last() {
                out.cname = Some(CnameDelegation {
                    target: target.clone(),
                    chain,
                });
                out.dangling_cname = true;
            }
        }
    } else if out.status == DiscoveryStatus::NoRecord {
        out.dangling_cname = true;
    }
    out
}
