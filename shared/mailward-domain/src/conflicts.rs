//! DNS conflicts (SPEC §2.2): what conflict detection (`mailward-conflicts`) finds at a label,
//! and the [`StoredConflict`] a domain keeps, which adds how often and since when it was seen.

use serde::{Deserialize, Serialize};

/// The protocol a conflicting label belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "openapi", schema(as = ConflictProtocol))]
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
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
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

impl ConflictKind {
    /// The wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            ConflictKind::CnameWithOtherData => "cname_with_other_data",
            ConflictKind::MultipleDmarcRecords => "multiple_dmarc_records",
            ConflictKind::MultipleSpfRecords => "multiple_spf_records",
            ConflictKind::MultipleBimiRecords => "multiple_bimi_records",
            ConflictKind::CnameTargetUnresolvable => "cname_target_unresolvable",
            ConflictKind::CnameChainTooDeep => "cname_chain_too_deep",
            ConflictKind::AuthoritativeDisagreement => "authoritative_disagreement",
            ConflictKind::ResolverDivergence => "resolver_divergence",
            ConflictKind::ManagedDelegationMissing => "managed_delegation_missing",
        }
    }
}

/// What one authoritative nameserver answered for the label.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
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
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
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
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
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

/// A conflict as a domain keeps it: the detection plus its occurrence count and first and last
/// detection times (the full SPEC §2.2 shape).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct StoredConflict {
    /// What detection found, the last time it was seen.
    #[serde(flatten)]
    pub conflict: Conflict,
    /// How many sweep passes found it.
    pub occurrence_count: u32,
    /// When it was first seen.
    #[serde(with = "time::serde::rfc3339")]
    #[cfg_attr(feature = "openapi", schema(value_type = String, format = DateTime))]
    pub first_detected_at: time::OffsetDateTime,
    /// When it was last seen.
    #[serde(with = "time::serde::rfc3339")]
    #[cfg_attr(feature = "openapi", schema(value_type = String, format = DateTime))]
    pub last_detected_at: time::OffsetDateTime,
}

impl StoredConflict {
    /// The identity of a conflict across passes: its label and kind.
    pub fn key(&self) -> (&str, ConflictKind) {
        (&self.conflict.label, self.conflict.kind)
    }

    /// The stored list after a detection pass: a conflict seen again keeps its first detection
    /// time and counts one more occurrence; a new one starts at one; a conflict not seen any more
    /// is resolved and leaves the list, unless its label is in `inconclusive_labels` (it could
    /// not be examined fully this pass): then it stays exactly as it was, not known to be
    /// resolved and not seen again.
    pub fn merge(
        previous: &[StoredConflict],
        found: &[Conflict],
        inconclusive_labels: &[String],
        now: time::OffsetDateTime,
    ) -> Vec<StoredConflict> {
        let mut merged: Vec<StoredConflict> = found
            .iter()
            .map(|conflict| {
                let earlier = previous
                    .iter()
                    .find(|p| p.key() == (conflict.label.as_str(), conflict.kind));
                StoredConflict {
                    conflict: conflict.clone(),
                    occurrence_count: earlier.map_or(0, |p| p.occurrence_count) + 1,
                    first_detected_at: earlier.map_or(now, |p| p.first_detected_at),
                    last_detected_at: now,
                }
            })
            .collect();
        let unseen_but_unsure: Vec<StoredConflict> = previous
            .iter()
            .filter(|p| {
                inconclusive_labels.contains(&p.conflict.label)
                    && !merged.iter().any(|m| m.key() == p.key())
            })
            .cloned()
            .collect();
        merged.extend(unseen_but_unsure);
        merged
    }

    /// The sorted identities of a list, to tell whether a pass changed it.
    pub fn keys(list: &[StoredConflict]) -> Vec<(String, ConflictKind)> {
        let mut keys: Vec<_> = list
            .iter()
            .map(|c| (c.conflict.label.clone(), c.conflict.kind))
            .collect();
        keys.sort();
        keys
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn conflict(label: &str) -> Conflict {
        Conflict {
            label: label.into(),
            protocol: Protocol::Dmarc,
            kind: ConflictKind::MultipleDmarcRecords,
            summary: String::new(),
            rfc: String::new(),
            consequence: String::new(),
            remediation: String::new(),
            conflicting_records: Vec::new(),
            authoritative_nameservers: Vec::new(),
            public_resolvers: Vec::new(),
        }
    }

    fn stored(label: &str) -> StoredConflict {
        StoredConflict {
            conflict: conflict(label),
            occurrence_count: 4,
            first_detected_at: time::macros::datetime!(2026-11-01 00:00 UTC),
            last_detected_at: time::macros::datetime!(2026-11-02 00:00 UTC),
        }
    }

    #[test]
    fn an_unseen_conflict_stays_only_where_the_pass_was_inconclusive() {
        let now = time::macros::datetime!(2026-11-03 00:00 UTC);
        let previous = vec![stored("_dmarc.a.test"), stored("_dmarc.b.test")];
        let merged = StoredConflict::merge(&previous, &[], &["_dmarc.a.test".to_owned()], now);
        assert_eq!(merged, vec![stored("_dmarc.a.test")], "kept untouched");
        assert!(StoredConflict::merge(&previous, &[], &[], now).is_empty());
    }

    #[test]
    fn a_conflict_seen_again_counts_once_more_and_keeps_its_first_time() {
        let now = time::macros::datetime!(2026-11-03 00:00 UTC);
        let previous = vec![stored("_dmarc.a.test")];
        let merged = StoredConflict::merge(
            &previous,
            &[conflict("_dmarc.a.test"), conflict("_dmarc.c.test")],
            &[],
            now,
        );
        assert_eq!(merged[0].occurrence_count, 5);
        assert_eq!(merged[0].first_detected_at, previous[0].first_detected_at);
        assert_eq!(merged[0].last_detected_at, now);
        assert_eq!(merged[1].occurrence_count, 1);
        assert_eq!(merged[1].first_detected_at, now);
    }

    #[test]
    fn stored_conflicts_read_the_json_earlier_versions_wrote() {
        let json = serde_json::json!({
            "label": "_dmarc.a.test", "protocol": "dmarc", "kind": "multiple_dmarc_records",
            "summary": "s", "rfc": "r", "consequence": "c", "remediation": "m",
            "conflicting_records": ["v=DMARC1; p=none", "v=DMARC1; p=reject"],
            "authoritative_nameservers": [], "public_resolvers": [],
            "occurrence_count": 2,
            "first_detected_at": "2026-11-01T00:00:00Z",
            "last_detected_at": "2026-11-02T00:00:00Z",
        });
        let parsed: StoredConflict = serde_json::from_value(json.clone()).unwrap();
        assert_eq!(parsed.occurrence_count, 2);
        assert_eq!(serde_json::to_value(&parsed).unwrap(), json);
    }
}
