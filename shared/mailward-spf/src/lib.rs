//! RFC 7208 SPF for Mailward: a strict record parser, the `check_host()` evaluator and an auditor.
//!
//! Owns: SPF syntax ([`parse`], [`macros`]), record selection ([`select`]), evaluation for one
//! client address ([`eval`]) and the whole-tree audit behind SPF diagnostics ([`audit`]). Every DNS
//! question goes through [`mailward_domain::dns::DnsResolver`], so tests use an in-memory fake and
//! production the real resolver; this crate does no I/O of its own and depends on no async
//! runtime, HTTP stack or AWS crate.
//!
//! Evaluation and audit are deliberately different operations (LESSONS.md, SPF): the evaluator
//! stops at the first match for one address, the way a receiver does; the auditor has no address
//! and walks every include and redirect, so a record that "passes" for some senders but is over
//! the ten-lookup limit for others is still reported. Both count lookups the same way (SPEC §8.2).
//!
//! All results are plain data (`Debug`, `Clone`, `PartialEq`, `serde::Serialize`) for the HTTP
//! layer to convert into its wire types.

pub mod audit;
pub mod eval;
pub mod flatten;
pub mod macros;
pub mod names;
pub mod parse;
pub mod problem;
pub mod select;
pub mod syntax;

pub use audit::{Health, LookupNode, NodeKind, SpfAudit, audit_domain, audit_record};
pub use eval::{
    LOOKUP_LIMIT, MX_RECORD_LIMIT, MatchedTerm, PTR_NAME_LIMIT, SpfOutcome, SpfRequest,
    VOID_LOOKUP_LIMIT, check_host,
};
pub use macros::{MacroString, MacroValues};
pub use parse::{
    Directive, DualCidr, Mechanism, Modifier, Qualifier, Record, SyntaxError, SyntaxErrorCode,
    Term, parse_record,
};
pub use problem::{Problem, ProblemCode, Severity};
pub use select::{PublishedRecord, RecordLookup, lookup_spf_record};

use serde::Serialize;
use std::fmt;

/// The seven results of `check_host()` (RFC 7208 §2.6).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SpfResult {
    /// The client is authorized.
    Pass,
    /// The client is explicitly not authorized.
    Fail,
    /// Probably not authorized (`~`).
    SoftFail,
    /// No assertion (`?`, or no match and no redirect).
    Neutral,
    /// No SPF record, or the domain could not be checked at all.
    None,
    /// A transient DNS error; try later.
    TempError,
    /// The published records are broken.
    PermError,
}

impl SpfResult {
    /// The lower-case name used in headers and reports.
    pub fn as_str(self) -> &'static str {
        match self {
            SpfResult::Pass => "pass",
            SpfResult::Fail => "fail",
            SpfResult::SoftFail => "softfail",
            SpfResult::Neutral => "neutral",
            SpfResult::None => "none",
            SpfResult::TempError => "temperror",
            SpfResult::PermError => "permerror",
        }
    }
}

impl fmt::Display for SpfResult {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl From<Qualifier> for SpfResult {
    fn from(qualifier: Qualifier) -> SpfResult {
        match qualifier {
            Qualifier::Pass => SpfResult::Pass,
            Qualifier::Fail => SpfResult::Fail,
            Qualifier::SoftFail => SpfResult::SoftFail,
            Qualifier::Neutral => SpfResult::Neutral,
        }
    }
}
