//! DMARC for Mailward, per RFC 9989 (which obsoletes RFC 7489).
//!
//! * [`parse`]: the policy record parser, for both generations of the record (RFC 9989 tags and
//!   the RFC 7489 legacy tags `pct`, `rf`, `ri`), with stable snake_case issue codes.
//! * [`discover`]: the record at `_dmarc.<domain>`, including CNAME delegation (how Mailward
//!   hosts DMARC) and the multiple-record rule.
//! * [`tree_walk`]: RFC 9989 policy and organizational-domain discovery by the DNS tree walk,
//!   and the domain-existence test that decides whether `np` applies.
//! * [`authorize`]: external report-destination authorization
//!   (`<policy domain>._report._dmarc.<host>`).
//! * [`generate`]: the exact TXT value Mailward tells users to publish.
//!
//! Every DNS query goes through [`mailward_domain::dns::DnsResolver`]; a failed lookup (SERVFAIL,
//! timeout, ...) is never reported as a missing record. Nothing here panics on any input: records
//! are attacker-controlled.

pub mod authorize;
pub mod discover;
pub mod generate;
mod names;
pub mod parse;
pub mod tree_walk;

pub use authorize::{AuthorizationStatus, DestinationCheck, ReportTag, check_report_destinations};
pub use discover::{CnameDelegation, DiscoveryStatus, RecordDiscovery, discover_record};
pub use generate::{
    GenerateError, GenerateOptions, SubdomainPolicyOption, generate_record, to_character_strings,
};
pub use names::DnsFailure;
pub use parse::{
    Alignment, DmarcRecord, Issue, IssueCode, Policy, PsdFlag, RecordStatus, ReportUri, Severity,
    SizeLimit, parse_record, parse_report_uri, parse_txt,
};
pub use tree_walk::{
    DomainExistence, OrgDomainRule, PolicyDiscovery, PolicySource, PolicyStatus, PolicyTag,
    StepOutcome, WalkStep, discover_policy, domain_exists, organizational_domain, walk_targets,
};
