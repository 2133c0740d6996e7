//! Sources that are not in the catalogue yet, and organizations' own sources.
//!
//! **Candidates.** A sender seen in aggregate reports that no catalogue source identifies, named
//! by the registrable domain of its PTR name, envelope domain or DKIM signer, is a candidate
//! for the catalogue. Each watched domain contributes its [`CandidateEvidence`] (rewritten by
//! every sender identification, so nothing is counted twice); staff read the sum across
//! organizations ([`Candidate`]) and promote it to an `ACTIVE` source or reject it. Candidates
//! are Mailward staff's alone: no customer route lists them.
//!
//! **Custom sources.** An organization names its own senders (an in-house relay, a CRM the
//! catalogue lacks) as sources with `is_custom` true, `origin` [`CUSTOM_ORIGIN`]; they identify
//! senders of that organization's domains only, and only that organization sees them.

use crate::sources::{
    Category, Documentation, ForwardingType, Source, SourceStatus, SpfSupportOptions, SupportLevel,
};
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use uuid::Uuid;

/// `origin` of an organization's own sources.
pub const CUSTOM_ORIGIN: &str = "CUSTOM";

/// `origin` of a source staff promoted from a candidate.
pub const PROMOTED_ORIGIN: &str = "PROMOTED";

/// Names kept per kind of evidence, per domain and in a candidate's sum.
pub const MAX_EVIDENCE_NAMES: usize = 20;

/// What one watched domain's reports say of an unidentified sender, within the retention of
/// its organization's plan.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CandidateEvidence {
    /// The candidate's name: a registrable domain.
    pub name: String,
    pub org_id: Uuid,
    pub domain_id: Uuid,
    /// Envelope (RFC 5321 MAIL FROM) domains of its rows.
    pub envelope_domains: BTreeSet<String>,
    /// Domains of its verified DKIM signatures (other than the watched domain's own).
    pub dkim_domains: BTreeSet<String>,
    /// Reverse-DNS names of its source addresses.
    pub ptr_names: BTreeSet<String>,
    /// Source addresses seen (at most [`MAX_EVIDENCE_NAMES`]).
    pub ips: BTreeSet<String>,
    /// Messages in the rows.
    pub volume: u64,
    /// Days with rows (`YYYY-MM-DD`).
    pub first_seen: String,
    pub last_seen: String,
}

impl CandidateEvidence {
    /// Adds a name to one of the sets, up to [`MAX_EVIDENCE_NAMES`].
    pub fn note(set: &mut BTreeSet<String>, name: &str) {
        let name = name.trim_end_matches('.').to_ascii_lowercase();
        if !name.is_empty() && set.len() < MAX_EVIDENCE_NAMES {
            set.insert(name);
        }
    }

    /// Widens the seen days to include `day`.
    pub fn saw(&mut self, day: &str) {
        if self.first_seen.is_empty() || day < self.first_seen.as_str() {
            self.first_seen = day.to_owned();
        }
        if day > self.last_seen.as_str() {
            self.last_seen = day.to_owned();
        }
    }
}

/// Staff's decision on a candidate; absent while it waits.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CandidateReview {
    /// `ACTIVE` (promoted) or `REJECTED`.
    pub status: SourceStatus,
    /// RFC 3339.
    pub reviewed_at: String,
    pub reviewed_by: String,
    /// The catalogue source it became, when promoted.
    pub source_id: Option<Uuid>,
}

/// A candidate as staff see it: the evidence of every domain summed, and the review.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Candidate {
    /// The registrable domain that names it (the path parameter of its staff routes).
    pub name: String,
    /// `PENDING_REVIEW` until staff promote (`ACTIVE`) or reject (`REJECTED`) it.
    pub status: SourceStatus,
    /// Organizations and watched domains whose reports show it (counts only: which ones is
    /// those organizations' business).
    pub organizations: u64,
    pub domains: u64,
    pub volume: u64,
    pub envelope_domains: BTreeSet<String>,
    pub dkim_domains: BTreeSet<String>,
    pub ptr_names: BTreeSet<String>,
    pub first_seen: String,
    pub last_seen: String,
    pub reviewed_at: Option<String>,
    pub reviewed_by: Option<String>,
    /// The source it was promoted to.
    pub source_id: Option<Uuid>,
}

impl Candidate {
    /// Sums the evidence of `name` (every item must be of that name).
    pub fn sum(
        name: &str,
        evidence: &[CandidateEvidence],
        review: Option<&CandidateReview>,
    ) -> Self {
        let mut c = Candidate {
            name: name.to_owned(),
            status: review.map_or(SourceStatus::PendingReview, |r| r.status),
            organizations: 0,
            domains: evidence.len() as u64,
            volume: 0,
            envelope_domains: BTreeSet::new(),
            dkim_domains: BTreeSet::new(),
            ptr_names: BTreeSet::new(),
            first_seen: String::new(),
            last_seen: String::new(),
            reviewed_at: review.map(|r| r.reviewed_at.clone()),
            reviewed_by: review.map(|r| r.reviewed_by.clone()),
            source_id: review.and_then(|r| r.source_id),
        };
        let mut orgs = BTreeSet::new();
        for e in evidence {
            orgs.insert(e.org_id);
            c.volume += e.volume;
            for (into, from) in [
                (&mut c.envelope_domains, &e.envelope_domains),
                (&mut c.dkim_domains, &e.dkim_domains),
                (&mut c.ptr_names, &e.ptr_names),
            ] {
                for name in from {
                    CandidateEvidence::note(into, name);
                }
            }
            if c.first_seen.is_empty() || (!e.first_seen.is_empty() && e.first_seen < c.first_seen)
            {
                c.first_seen = e.first_seen.clone();
            }
            if e.last_seen > c.last_seen {
                c.last_seen = e.last_seen.clone();
            }
        }
        c.organizations = orgs.len() as u64;
        c
    }
}

/// A source stored with its own times (promoted and organizations' sources; the embedded
/// catalogue's times are its publication's).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DatedSource {
    #[serde(flatten)]
    pub source: Source,
    #[serde(with = "time::serde::rfc3339")]
    pub created_at: time::OffsetDateTime,
    #[serde(with = "time::serde::rfc3339")]
    pub updated_at: time::OffsetDateTime,
}

/// A source with the catalogue's neutral defaults: no support claimed, no instructions. What a
/// promotion or an organization's definition starts from.
pub fn plain_source(
    id: Uuid,
    external_id: String,
    name: String,
    category: Category,
    origin: &str,
) -> Source {
    Source {
        id,
        external_id,
        name,
        display_name: None,
        homepage: None,
        logo_url: None,
        category,
        status: SourceStatus::Active,
        origin: origin.to_owned(),
        is_custom: origin == CUSTOM_ORIGIN,
        parent_source_id: None,
        dmarc_support: false,
        forwarding_type: ForwardingType::NotForwarder,
        spf_support: SupportLevel::None,
        spf_supported_methods: Vec::new(),
        spf_discovery_values: Vec::new(),
        spf_reply_to_discovery_values: Vec::new(),
        spf_reply_to_target: None,
        spf_support_options: SpfSupportOptions::default(),
        dkim_support: SupportLevel::None,
        dkim_discovery_selectors: Vec::new(),
        base_domains: Vec::new(),
        envelope_froms: Vec::new(),
        mx_domains: Vec::new(),
        documentation: Documentation::default(),
        dkim_instructions: None,
        spf_instructions: None,
        ai_confidence: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn evidence(org: u128, volume: u64, first: &str, last: &str, ptr: &str) -> CandidateEvidence {
        let mut e = CandidateEvidence {
            name: "bulk.example".into(),
            org_id: Uuid::from_u128(org),
            domain_id: Uuid::new_v4(),
            volume,
            ..Default::default()
        };
        e.saw(first);
        e.saw(last);
        CandidateEvidence::note(&mut e.ptr_names, ptr);
        e
    }

    #[test]
    fn evidence_sums_across_domains_and_counts_organizations_once() {
        let all = [
            evidence(1, 10, "2026-11-02", "2026-11-05", "a.bulk.example."),
            evidence(1, 5, "2026-11-01", "2026-11-03", "A.bulk.example"),
            evidence(2, 7, "2026-11-04", "2026-11-09", "b.bulk.example"),
        ];
        let c = Candidate::sum("bulk.example", &all, None);
        assert_eq!((c.organizations, c.domains, c.volume), (2, 3, 22));
        assert_eq!(
            (c.first_seen.as_str(), c.last_seen.as_str()),
            ("2026-11-01", "2026-11-09")
        );
        assert_eq!(c.ptr_names.len(), 2);
        assert_eq!(c.status, SourceStatus::PendingReview);
    }

    #[test]
    fn evidence_names_are_capped() {
        let mut set = BTreeSet::new();
        for i in 0..50 {
            CandidateEvidence::note(&mut set, &format!("h{i}.example"));
        }
        assert_eq!(set.len(), MAX_EVIDENCE_NAMES);
    }
}
