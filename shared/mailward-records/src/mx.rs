//! Checks over a domain's MX answer: null MX (RFC 7505), duplicate hosts, exchanges that are IP
//! literals or not host names, and exchanges that are CNAMEs (RFC 2181 §10.3; whether a host is
//! an alias needs a lookup, so the caller passes the answer in).
//!
//! The root name: `mailward_domain::dns::RecordData::Mx` stores `exchange` lower-case without
//! the trailing dot, so the null MX's `.` arrives as the empty string; `"."` is accepted too.
//!
//! | code | severity | meaning |
//! |---|---|---|
//! | `no_mx_records` | warning | no MX records: senders fall back to the domain's own A/AAAA (RFC 5321 §5.1) |
//! | `null_mx_with_other_records` | error | a null MX (`.`) next to other MX records (RFC 7505 §3 forbids it; senders may bounce or use the others) |
//! | `null_mx_nonzero_preference` | warning | the null MX has a preference other than 0 (RFC 7505 §3) |
//! | `duplicate_mx_host` | warning | the same exchange is listed more than once |
//! | `mx_ip_literal` | error | an exchange is an IP address; MX targets must be host names (RFC 5321 §5.1) |
//! | `invalid_mx_host` | error | an exchange is not a valid host name |
//! | `mx_is_cname` | warning | an exchange is a CNAME (RFC 2181 §10.3); most senders cope, some do not |

use crate::hostname::{is_hostname, normalize};
use crate::tags::clip;
use crate::{Problem, has_errors, problem_codes};
use mailward_domain::dns::RecordData;
use serde::Serialize;
use std::net::IpAddr;

problem_codes! {
    /// Problem codes for MX answers (see the module table).
    pub enum MxCode {
        /// No MX records.
        NoMxRecords = ("no_mx_records", Warning),
        /// Null MX mixed with other MX records.
        NullMxWithOtherRecords = ("null_mx_with_other_records", Error),
        /// Null MX with preference other than 0.
        NullMxNonzeroPreference = ("null_mx_nonzero_preference", Warning),
        /// An exchange repeats.
        DuplicateMxHost = ("duplicate_mx_host", Warning),
        /// An exchange is an IP address.
        MxIpLiteral = ("mx_ip_literal", Error),
        /// An exchange is not a host name.
        InvalidMxHost = ("invalid_mx_host", Error),
        /// An exchange is a CNAME.
        MxIsCname = ("mx_is_cname", Warning),
    }
}

/// One MX record: preference and exchange (lower-case, no trailing dot; the root is `""`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MxHost {
    /// Lower values are tried first.
    pub preference: u16,
    /// The target host.
    pub exchange: String,
}

impl MxHost {
    /// Builds a host, normalizing the exchange (lower case, trailing dot removed, `.` → `""`).
    pub fn new(preference: u16, exchange: &str) -> Self {
        MxHost {
            preference,
            exchange: normalize(exchange),
        }
    }

    /// True for the root exchange that a null MX uses.
    pub fn is_root(&self) -> bool {
        self.exchange.is_empty()
    }
}

/// The MX records of a resolver answer (other record types are skipped). Why: the audit gets
/// `RecordData` from the `DnsResolver` port and this module works on plain pairs.
pub fn from_answer(records: &[RecordData]) -> Vec<MxHost> {
    records
        .iter()
        .filter_map(|r| match r {
            RecordData::Mx {
                preference,
                exchange,
            } => Some(MxHost::new(*preference, exchange)),
            _ => None,
        })
        .collect()
}

/// The result of [`check`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MxReport {
    /// True when the domain publishes exactly one MX and it is the root: it accepts no mail.
    pub null_mx: bool,
    /// The non-root exchanges by ascending preference, duplicates removed.
    pub hosts: Vec<MxHost>,
    /// Everything found wrong or weak.
    pub problems: Vec<Problem<MxCode>>,
}

impl MxReport {
    /// True when no problem is an error.
    pub fn is_valid(&self) -> bool {
        !has_errors(&self.problems)
    }
}

/// Checks an MX answer. `cname_hosts` lists the exchanges the caller found to be CNAMEs (any
/// case, trailing dot optional).
pub fn check<S: AsRef<str>>(records: &[MxHost], cname_hosts: &[S]) -> MxReport {
    let mut problems = Vec::new();
    let records: Vec<MxHost> = records
        .iter()
        .map(|r| MxHost::new(r.preference, &r.exchange))
        .collect();
    if records.is_empty() {
        problems.push(Problem::new(
            MxCode::NoMxRecords,
            "no MX records: mail goes to the domain's own address records",
        ));
    }
    let roots: Vec<&MxHost> = records.iter().filter(|r| r.is_root()).collect();
    let null_mx = records.len() == 1 && roots.len() == 1;
    if !roots.is_empty() && records.len() > roots.len() {
        problems.push(Problem::new(
            MxCode::NullMxWithOtherRecords,
            "a null MX (.) must be the only MX record (RFC 7505)",
        ));
    }
    for r in &roots {
        if r.preference != 0 {
            problems.push(Problem::new(
                MxCode::NullMxNonzeroPreference,
                format!("the null MX has preference {}, not 0", r.preference),
            ));
        }
    }

    let cnames: Vec<String> = cname_hosts.iter().map(|c| normalize(c.as_ref())).collect();
    let mut sorted: Vec<&MxHost> = records.iter().filter(|r| !r.is_root()).collect();
    sorted.sort_by_key(|r| r.preference);
    let mut hosts: Vec<MxHost> = Vec::new();
    for r in sorted {
        if hosts.iter().any(|h| h.exchange == r.exchange) {
            problems.push(Problem::new(
                MxCode::DuplicateMxHost,
                format!("{} is listed more than once", clip(&r.exchange)),
            ));
            continue;
        }
        if is_ip_literal(&r.exchange) {
            problems.push(Problem::new(
                MxCode::MxIpLiteral,
                format!(
                    "{} is an IP address; an MX must name a host",
                    clip(&r.exchange)
                ),
            ));
        } else if !is_hostname(&r.exchange) {
            problems.push(Problem::new(
                MxCode::InvalidMxHost,
                format!("{} is not a valid host name", clip(&r.exchange)),
            ));
        }
        if cnames.contains(&r.exchange) {
            problems.push(Problem::new(
                MxCode::MxIsCname,
                format!(
                    "{} is a CNAME; an MX should name the host itself",
                    clip(&r.exchange)
                ),
            ));
        }
        hosts.push(r.clone());
    }
    MxReport {
        null_mx,
        hosts,
        problems,
    }
}

/// An IPv4 or IPv6 address, bare or in brackets.
fn is_ip_literal(name: &str) -> bool {
    let inner = name
        .strip_prefix('[')
        .and_then(|s| s.strip_suffix(']'))
        .unwrap_or(name);
    let inner = inner.strip_prefix("ipv6:").unwrap_or(inner);
    inner.parse::<IpAddr>().is_ok()
}
