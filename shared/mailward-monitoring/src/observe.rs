//! What DNS says about one domain's DMARC monitoring, with the evidence.
//!
//! Why a separate step from [`crate::classify`]: the sweep stores and shows the evidence
//! (verbatim records, counts, the host they came from), and the classification rules are easier
//! to test on a plain value than through a DNS server.
//!
//! Lookups made, in order:
//! 1. `NS <domain>`: whether the domain's name servers answer at all. NXDOMAIN means the name
//!    does not exist in DNS (no delegation); an answer, even empty (NODATA, normal for a
//!    subdomain that is not a zone apex), means they answer; SERVFAIL, timeout or REFUSED mean
//!    we could not find out.
//! 2. `TXT _dmarc.<domain>` through [`mailward_dmarc::discover_record`] (CNAME chain followed,
//!    multiple-record rule, near misses such as `v=dmarc1` kept).
//! 3. Only when the domain has no record of its own: the RFC 9989 tree walk
//!    ([`mailward_dmarc::discover_policy`]) to see whether a parent (organizational or public
//!    suffix) domain publishes one.
//!
//! A lookup that fails (SERVFAIL, timeout, REFUSED, budget) is recorded in
//! [`Observation::transient_failures`] and never read as "no record".

use mailward_dmarc::{
    DiscoveryStatus, DmarcRecord, DnsFailure, PolicyStatus, discover_policy, discover_record,
};
use mailward_domain::dns::{DnsError, DnsResolver, RecordData, RecordType};
use mailward_domain::domain::Policy;
use serde::{Deserialize, Serialize};

/// What Mailward expects a monitored domain to publish; the caller derives it from the domain's
/// configuration, so the observation can say exactly what is missing.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Expectation {
    /// Mailward's per-domain aggregate-report address (`<token>@reports.mailward.example`); a
    /// `mailto:` prefix is tolerated.
    pub monitoring_email: String,
    /// For hosted DMARC: the target `_dmarc.<domain>` must be a CNAME to. `None` when the
    /// customer publishes the TXT record themselves.
    pub delegated_target: Option<String>,
}

/// Why a lookup gave no answer. All of these mean "could not find out", never "missing".
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LookupFailure {
    /// SERVFAIL.
    ServFail,
    /// REFUSED.
    Refused,
    /// No answer in time.
    Timeout,
    /// The query budget was spent.
    BudgetExhausted,
    /// The name could not be queried.
    InvalidName,
    /// Any other failure (network, malformed answer).
    Other,
}

impl LookupFailure {
    /// Stable snake_case code, for logs and the `why` of an indeterminate verdict.
    pub fn code(self) -> &'static str {
        match self {
            LookupFailure::ServFail => "servfail",
            LookupFailure::Refused => "refused",
            LookupFailure::Timeout => "timeout",
            LookupFailure::BudgetExhausted => "budget_exhausted",
            LookupFailure::InvalidName => "invalid_name",
            LookupFailure::Other => "other",
        }
    }

    fn from_dmarc(failure: &DnsFailure) -> Self {
        match failure {
            DnsFailure::ServFail => LookupFailure::ServFail,
            DnsFailure::Refused => LookupFailure::Refused,
            DnsFailure::Timeout => LookupFailure::Timeout,
            DnsFailure::BudgetExhausted => LookupFailure::BudgetExhausted,
            DnsFailure::InvalidName => LookupFailure::InvalidName,
            DnsFailure::Other => LookupFailure::Other,
        }
    }

    /// `None` for NXDOMAIN, which is an answer.
    fn from_port(error: &DnsError) -> Option<Self> {
        Some(match error {
            DnsError::NxDomain => return None,
            DnsError::ServFail => LookupFailure::ServFail,
            DnsError::Refused => LookupFailure::Refused,
            DnsError::Timeout => LookupFailure::Timeout,
            DnsError::BudgetExhausted => LookupFailure::BudgetExhausted,
            DnsError::InvalidName(_) => LookupFailure::InvalidName,
            DnsError::Other(_) => LookupFailure::Other,
        })
    }
}

/// One lookup that failed, kept as evidence (and as the reason a verdict is indeterminate).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TransientFailure {
    /// Which step: `nameservers`, `dmarc_record` or `parent_walk`.
    pub step: String,
    /// The name queried.
    pub name: String,
    /// What went wrong.
    pub failure: LookupFailure,
}

/// Whether the domain's name servers answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum NameserverOutcome {
    /// They answered; `hosts` are the NS records at the name (empty for a subdomain that is not
    /// a zone apex, which is normal).
    Answered {
        /// NS targets, lower-case.
        hosts: Vec<String>,
    },
    /// NXDOMAIN: the name does not exist in DNS.
    DomainDoesNotExist,
    /// The name cannot be a DNS name at all (bad labels, too long).
    InvalidName,
    /// The lookup failed; nothing is known.
    Failed {
        /// Why.
        failure: LookupFailure,
    },
}

/// What stands at `_dmarc.<domain>`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DmarcOutcome {
    /// Exactly one `v=DMARC1` record.
    Found,
    /// No `v=DMARC1` record (NXDOMAIN, NODATA or only other TXT).
    NoRecord,
    /// Several `v=DMARC1` records: receivers apply no DMARC at all.
    MultipleRecords,
    /// The lookup failed (or was not made because the name is invalid).
    Failed,
}

/// How `_dmarc.<domain>` relates to the expected CNAME delegation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum Delegation {
    /// No delegation was expected (the customer publishes TXT).
    NotExpected,
    /// The name is a CNAME whose chain reaches the expected target.
    Delegated,
    /// A TXT record stands where the CNAME was expected.
    TxtInsteadOfCname,
    /// The name is a CNAME to somewhere else.
    OtherTarget {
        /// The chain followed.
        chain: Vec<String>,
    },
    /// Neither a CNAME nor a TXT record.
    Absent,
}

/// The parent-domain check, made only when the domain has no record of its own.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum ParentOutcome {
    /// Not asked (the domain has its own record, or DNS already failed).
    NotChecked,
    /// No parent domain publishes a record either.
    NoRecord,
    /// A parent (organizational or public suffix) domain publishes the record in force.
    Record {
        /// `_dmarc.<parent>`.
        host: String,
        /// The record, verbatim.
        record: String,
        /// The policy that applies to this domain from it (`sp`/`np`).
        policy: Option<Policy>,
    },
    /// The walk failed before the answer was settled.
    Failed {
        /// Why.
        failure: LookupFailure,
    },
}

/// Everything one evaluation learnt, with the evidence. Serializable so the sweep can keep it
/// (snapshots, support) and [`crate::classify`] can be tested on hand-built values.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Observation {
    /// The domain (normalized: lower-case, no trailing dot).
    pub domain: String,
    /// `_dmarc.<domain>`.
    pub dmarc_host: String,
    /// The report address Mailward expects in `rua` (without `mailto:`).
    pub expected_rua: String,
    /// Whether the name servers answer.
    pub nameservers: NameserverOutcome,
    /// What stands at `_dmarc.<domain>`.
    pub dmarc: DmarcOutcome,
    /// Every `v=DMARC1` record there, verbatim (strings concatenated).
    pub records: Vec<String>,
    /// How many `v=DMARC1` records there are.
    pub record_count: usize,
    /// TXT records there that mention DMARC but are not DMARC records (`v=dmarc1`,
    /// `p=reject; v=DMARC1`): receivers ignore them.
    pub near_misses: Vec<String>,
    /// The host the record was read from: the CNAME target when delegated, else `dmarc_host`.
    pub record_host: String,
    /// The CNAME chain followed from `dmarc_host` (empty when none).
    pub cname_chain: Vec<String>,
    /// The delegation check.
    pub delegation: Delegation,
    /// For a single record: whether receivers apply DMARC with it.
    pub record_usable: Option<bool>,
    /// For a single record: its `rua` entries as written.
    pub rua: Vec<String>,
    /// For a single record: whether `rua` carries [`Observation::expected_rua`] (mailto
    /// addresses compared case-insensitively, `!size` suffixes ignored).
    pub has_monitoring_rua: bool,
    /// The parent-domain check.
    pub parent: ParentOutcome,
    /// The policy in force for the domain: its own record's `p`, else the parent's `sp`/`np`;
    /// `None` when no record applies.
    pub policy: Option<Policy>,
    /// Every lookup that failed.
    pub transient_failures: Vec<TransientFailure>,
}

/// Observes one domain. Never fails: failures are part of the observation.
pub async fn observe(
    resolver: &dyn DnsResolver,
    domain: &str,
    expect: &Expectation,
) -> Observation {
    let name = normalize(domain);
    let expected_rua = strip_mailto(expect.monitoring_email.trim()).to_string();
    let dmarc_host = format!("_dmarc.{name}");
    let mut out = Observation {
        domain: name.clone(),
        dmarc_host: dmarc_host.clone(),
        expected_rua,
        nameservers: NameserverOutcome::InvalidName,
        dmarc: DmarcOutcome::Failed,
        records: Vec::new(),
        record_count: 0,
        near_misses: Vec::new(),
        record_host: dmarc_host.clone(),
        cname_chain: Vec::new(),
        delegation: Delegation::Absent,
        record_usable: None,
        rua: Vec::new(),
        has_monitoring_rua: false,
        parent: ParentOutcome::NotChecked,
        policy: None,
        transient_failures: Vec::new(),
    };
    if !is_queryable(&name) {
        return out;
    }

    out.nameservers = match resolver.lookup(&name, RecordType::Ns).await {
        Ok(answer) => NameserverOutcome::Answered {
            hosts: answer
                .records
                .iter()
                .filter_map(|r| match r {
                    RecordData::Ns(host) => Some(host.clone()),
                    _ => None,
                })
                .collect(),
        },
        Err(error) => match LookupFailure::from_port(&error) {
            None => NameserverOutcome::DomainDoesNotExist,
            Some(failure) => {
                out.transient_failures.push(TransientFailure {
                    step: "nameservers".into(),
                    name: name.clone(),
                    failure,
                });
                NameserverOutcome::Failed { failure }
            }
        },
    };
    if out.nameservers == NameserverOutcome::DomainDoesNotExist {
        // NXDOMAIN proves nothing exists at or below the name (RFC 8020): no further lookup.
        out.dmarc = DmarcOutcome::NoRecord;
        return out;
    }

    let found = discover_record(resolver, &name).await;
    if let Some(failure) = &found.failure {
        let failure = LookupFailure::from_dmarc(failure);
        out.transient_failures.push(TransientFailure {
            step: "dmarc_record".into(),
            name: dmarc_host.clone(),
            failure,
        });
    }
    out.dmarc = match found.status {
        DiscoveryStatus::Found => DmarcOutcome::Found,
        DiscoveryStatus::NoRecord => DmarcOutcome::NoRecord,
        DiscoveryStatus::MultipleRecords => DmarcOutcome::MultipleRecords,
        DiscoveryStatus::LookupFailed => DmarcOutcome::Failed,
    };
    if out.dmarc == DmarcOutcome::Failed {
        return out;
    }
    out.records = found.records.iter().map(|r| r.raw.clone()).collect();
    out.record_count = found.dmarc_record_count;
    out.near_misses = found.near_misses.iter().map(|r| r.raw.clone()).collect();
    if let Some(cname) = &found.cname {
        out.cname_chain = cname.chain.clone();
        if !found.dangling_cname {
            out.record_host = cname.target.clone();
        }
    }
    out.delegation = delegation(
        expect.delegated_target.as_deref(),
        &out.cname_chain,
        !out.records.is_empty() || !out.near_misses.is_empty(),
    );
    if let Some(record) = &found.record {
        out.record_usable = Some(record.is_usable());
        out.rua = record.rua.iter().map(|u| u.raw.clone()).collect();
        out.has_monitoring_rua = carries_address(record, &out.expected_rua);
        out.policy = record.p.map(to_domain_policy);
    }

    if out.dmarc == DmarcOutcome::NoRecord {
        let walk = discover_policy(resolver, &name).await;
        out.parent = match (walk.status, walk.policy_domain, walk.record) {
            (PolicyStatus::Found, Some(policy_domain), Some(record)) if policy_domain != name => {
                out.policy = walk.policy.map(to_domain_policy);
                ParentOutcome::Record {
                    host: format!("_dmarc.{policy_domain}"),
                    record: record.raw,
                    policy: out.policy,
                }
            }
            (PolicyStatus::NoPolicy, _, _) => ParentOutcome::NoRecord,
            (PolicyStatus::Found, _, _) => {
                // The domain's own record appeared between the two lookups: nothing consistent
                // can be said this time.
                ParentOutcome::Failed {
                    failure: LookupFailure::Other,
                }
            }
            (PolicyStatus::Indeterminate, _, _) => ParentOutcome::Failed {
                failure: walk
                    .failure
                    .as_ref()
                    .map(LookupFailure::from_dmarc)
                    .unwrap_or(LookupFailure::Other),
            },
        };
        if let ParentOutcome::Failed { failure } = &out.parent {
            out.transient_failures.push(TransientFailure {
                step: "parent_walk".into(),
                name: name.clone(),
                failure: *failure,
            });
        }
    }
    out
}

/// Lower-case, trimmed, one trailing dot removed.
fn normalize(domain: &str) -> String {
    let trimmed = domain.trim();
    trimmed
        .strip_suffix('.')
        .unwrap_or(trimmed)
        .to_ascii_lowercase()
}

/// True when `_dmarc.<name>` can be queried (ASCII, labels of 1..=63, at most 253 octets).
fn is_queryable(name: &str) -> bool {
    !name.is_empty()
        && name.len() + "_dmarc.".len() <= 253
        && name.is_ascii()
        && name
            .split('.')
            .all(|l| !l.is_empty() && l.len() <= 63 && !l.contains(char::is_whitespace))
}

fn strip_mailto(address: &str) -> &str {
    match address.get(..7) {
        Some(prefix) if prefix.eq_ignore_ascii_case("mailto:") => address.get(7..).unwrap_or(""),
        _ => address,
    }
}

fn normalize_host(host: &str) -> String {
    let host = host.trim();
    host.strip_suffix('.').unwrap_or(host).to_ascii_lowercase()
}

fn delegation(expected: Option<&str>, chain: &[String], has_txt: bool) -> Delegation {
    let Some(expected) = expected else {
        return Delegation::NotExpected;
    };
    let expected = normalize_host(expected);
    if chain.iter().any(|hop| normalize_host(hop) == expected) {
        Delegation::Delegated
    } else if !chain.is_empty() {
        Delegation::OtherTarget {
            chain: chain.to_vec(),
        }
    } else if has_txt {
        Delegation::TxtInsteadOfCname
    } else {
        Delegation::Absent
    }
}

/// True when one `rua` entry is a mailto URI for `expected` (case-insensitive, size suffix
/// ignored). The parser's decoded address is used; the raw URI is the fallback for an entry the
/// parser rejected (so a slightly malformed entry naming our address still counts as present).
fn carries_address(record: &DmarcRecord, expected: &str) -> bool {
    if expected.is_empty() {
        return false;
    }
    record.rua.iter().any(|uri| {
        let address = match &uri.address {
            Some(address) => address.as_str(),
            None => {
                let without_size = uri.uri.split('!').next().unwrap_or("");
                let trimmed = without_size.trim();
                if trimmed.len() < 7 || !trimmed.is_char_boundary(7) {
                    return false;
                }
                let (scheme, rest) = trimmed.split_at(7);
                if !scheme.eq_ignore_ascii_case("mailto:") {
                    return false;
                }
                rest
            }
        };
        address.trim().eq_ignore_ascii_case(expected)
    })
}

fn to_domain_policy(policy: mailward_dmarc::Policy) -> Policy {
    match policy {
        mailward_dmarc::Policy::None => Policy::None,
        mailward_dmarc::Policy::Quarantine => Policy::Quarantine,
        mailward_dmarc::Policy::Reject => Policy::Reject,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mailward_dmarc::parse_record;

    #[test]
    fn rua_match_ignores_case_size_and_scheme_case() {
        let record = parse_record(
            "v=DMARC1; p=none; rua=mailto:other@x.example,MAILTO:Tok@Reports.Mailward.Example!10m",
        );
        assert!(carries_address(&record, "tok@reports.mailward.example"));
        assert!(!carries_address(&record, "tok2@reports.mailward.example"));
        assert!(!carries_address(&record, ""));
    }

    #[test]
    fn mailto_prefix_is_tolerated_in_the_expectation() {
        assert_eq!(strip_mailto("MailTo:a@b.example"), "a@b.example");
        assert_eq!(strip_mailto("a@b.example"), "a@b.example");
        assert_eq!(strip_mailto("é"), "é");
    }

    #[test]
    fn delegation_states() {
        let chain = vec!["x.dmarc.mailward.example".to_string()];
        assert_eq!(delegation(None, &chain, true), Delegation::NotExpected);
        assert_eq!(
            delegation(Some("X.dmarc.mailward.example."), &chain, true),
            Delegation::Delegated
        );
        assert!(matches!(
            delegation(Some("y.dmarc.mailward.example"), &chain, true),
            Delegation::OtherTarget { .. }
        ));
        assert_eq!(
            delegation(Some("y.example"), &[], true),
            Delegation::TxtInsteadOfCname
        );
        assert_eq!(
            delegation(Some("y.example"), &[], false),
            Delegation::Absent
        );
    }

    #[test]
    fn queryable_names() {
        assert!(is_queryable("example.test"));
        assert!(!is_queryable(""));
        assert!(!is_queryable("a..b"));
        assert!(!is_queryable("exämple.test"));
        assert!(!is_queryable(&"a.".repeat(130)));
    }
}
