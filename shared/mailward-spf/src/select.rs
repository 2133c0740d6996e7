//! Record selection (RFC 7208 §4.4, §4.5): which TXT record at a name is the SPF record.
//!
//! A TXT record's character-strings are joined with no separator before anything else (§3.3), so
//! a record split into 255-octet strings is one record; only a *single* string over 255 octets is
//! a publishing problem. Records that do not start with `v=spf1` and a space (or end) are ignored
//! whatever they contain, including non-ASCII bytes. More than one SPF record is a permerror.
//! Type SPF (99) records are never queried (§3.1, §14.1).

use crate::parse::is_spf_record;
use mailward_domain::dns::{DnsError, DnsResolver, RecordData, RecordType};
use serde::Serialize;

/// Longest single TXT character-string (RFC 1035 §3.3).
pub const MAX_TXT_STRING_LEN: usize = 255;

/// A `v=spf1` TXT record as published.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PublishedRecord {
    /// The strings joined without separator; non-UTF-8 bytes are replaced, which later fails
    /// parsing as they are not printable ASCII anyway.
    pub text: String,
    /// Length in octets of each character-string, to spot a single string over 255 octets.
    pub string_lengths: Vec<usize>,
}

impl PublishedRecord {
    /// True when one character-string is longer than a TXT string may be.
    pub fn has_overlong_string(&self) -> bool {
        self.string_lengths.iter().any(|l| *l > MAX_TXT_STRING_LEN)
    }
}

/// The outcome of looking for an SPF record at a name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RecordLookup {
    /// Exactly one SPF record.
    Found {
        /// The record.
        record: PublishedRecord,
        /// TTL of the TXT answer, when known.
        ttl: Option<u32>,
    },
    /// NXDOMAIN, NODATA, or no TXT record starting with `v=spf1`.
    NotFound,
    /// More than one SPF record (permerror).
    Multiple {
        /// Every `v=spf1` record, in answer order.
        records: Vec<PublishedRecord>,
        /// TTL of the TXT answer, when known.
        ttl: Option<u32>,
    },
    /// The lookup failed (temperror): never read as "no record".
    Failed(DnsError),
}

/// Picks the `v=spf1` records out of TXT record data.
pub fn spf_records<'a>(records: impl IntoIterator<Item = &'a RecordData>) -> Vec<PublishedRecord> {
    records
        .into_iter()
        .filter_map(|data| match data {
            RecordData::Txt(strings) => {
                let joined = strings.concat();
                is_spf_record(&joined).then(|| PublishedRecord {
                    text: String::from_utf8_lossy(&joined).into_owned(),
                    string_lengths: strings.iter().map(Vec::len).collect(),
                })
            }
            _ => None,
        })
        .collect()
}

/// Queries TXT at `domain` and selects its SPF record.
pub async fn lookup_spf_record(resolver: &dyn DnsResolver, domain: &str) -> RecordLookup {
    match resolver.lookup(domain, RecordType::Txt).await {
        Ok(answer) => {
            let mut found = spf_records(&answer.records);
            match found.len() {
                0 => RecordLookup::NotFound,
                1 => RecordLookup::Found {
                    record: found.remove(0),
                    ttl: answer.ttl,
                },
                _ => RecordLookup::Multiple {
                    records: found,
                    ttl: answer.ttl,
                },
            }
        }
        Err(DnsError::NxDomain) | Err(DnsError::InvalidName(_)) => RecordLookup::NotFound,
        Err(error) => RecordLookup::Failed(error),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn txt(parts: &[&str]) -> RecordData {
        RecordData::Txt(parts.iter().map(|p| p.as_bytes().to_vec()).collect())
    }

    #[test]
    fn selection_follows_section_4_5() {
        let records = [
            txt(&["v=spf1 ip4:", "192.0.2.5 -all"]),
            txt(&[]),
            txt(&["v=spf10"]),
            txt(&["v=spf1", "mx"]),
            txt(&["google-site-verification=abc"]),
            RecordData::Txt(vec![vec![0x96]]),
        ];
        let found = spf_records(&records);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].text, "v=spf1 ip4:192.0.2.5 -all");
        assert_eq!(found[0].string_lengths, vec![11, 14]);
        assert!(!found[0].has_overlong_string());
        let upper = [txt(&["V=SPF1 -all"]), txt(&["v=spf1"])];
        assert_eq!(spf_records(&upper).len(), 2);
    }

    #[test]
    fn overlong_single_string_is_detected() {
        let long = format!("v=spf1 {} -all", "ip4:192.0.2.1 ".repeat(20));
        let record = &spf_records(&[txt(&[&long])])[0];
        assert!(record.has_overlong_string());
    }
}
