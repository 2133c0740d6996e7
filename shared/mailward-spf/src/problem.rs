//! Problems found by the evaluator and the auditor, with stable codes.
//!
//! One vocabulary serves both: an evaluation that ends in permerror or temperror says why with a
//! [`Problem`], and the auditor lists every problem it finds. Codes are snake_case strings that
//! clients may branch on; new codes may be added, existing ones keep their meaning.
//!
//! | code | severity | meaning |
//! |---|---|---|
//! | `no_spf_record` | error | the domain publishes no `v=spf1` TXT record (evaluation: `none`) |
//! | `multiple_spf_records` | error | more than one `v=spf1` record at one name (permerror, §4.5) |
//! | `syntax_error` | error | a record does not parse; the message starts with the precise [`crate::SyntaxErrorCode`] |
//! | `string_too_long` | error | one TXT character-string over 255 octets (split it; several strings are joined without separator) |
//! | `dns_temporary_error` | error | a lookup timed out or failed (temperror); never treated as "no record" |
//! | `lookup_limit_exceeded` | error | more than 10 terms that cost a DNS lookup (permerror, §4.6.4, SPEC §8.2) |
//! | `void_lookup_limit_exceeded` | error | more than 2 lookups with an empty answer or NXDOMAIN (permerror) |
//! | `mx_too_many_records` | error | an `mx` term's domain has more than 10 MX records (permerror, §4.6.4) |
//! | `include_target_without_spf` | error | an `include` target has no SPF record (permerror, §5.2) |
//! | `redirect_target_without_spf` | error | a `redirect` target has no SPF record (permerror, §6.1) |
//! | `invalid_target_name` | error | a target expands to a name that cannot be queried (empty or over-long label) |
//! | `include_loop` | error | an include or redirect chain returns to a domain already on its path, or nests too deep |
//! | `permissive_all` | error for `+all`, warning for `?all` | the record authorizes (or does not reject) every sender |
//! | `macro_unexpandable` | warning | a term uses a macro that needs a sender (e.g. `%{i}`); the audit counts it as one lookup but cannot follow it |
//! | `ptr_deprecated` | warning | `ptr` is slow and deprecated (§5.5) |
//! | `redirect_ignored_with_all` | warning | the record has `all`, so its `redirect` is never used (§6.1) and not charged |
//! | `terms_after_all` | warning | mechanisms after `all` are never evaluated and not charged |
//! | `audit_truncated` | warning | the audit stopped walking at its node or depth bound |

use serde::Serialize;
use std::fmt;

/// How bad a problem is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "openapi", schema(as = SpfSeverity))]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    /// Breaks SPF evaluation for some or all senders.
    Error,
    /// Works, but is risky, wasteful or deprecated.
    Warning,
}

/// Stable problem codes; see the module docs for the meaning of each.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "openapi", schema(as = SpfProblemCode))]
#[serde(rename_all = "snake_case")]
pub enum ProblemCode {
    /// No `v=spf1` record.
    NoSpfRecord,
    /// More than one `v=spf1` record.
    MultipleSpfRecords,
    /// A record does not parse.
    SyntaxError,
    /// A single character-string over 255 octets.
    StringTooLong,
    /// A lookup failed or timed out.
    DnsTemporaryError,
    /// More than 10 charged lookups.
    LookupLimitExceeded,
    /// More than 2 void lookups.
    VoidLookupLimitExceeded,
    /// More than 10 MX records for one `mx` term.
    MxTooManyRecords,
    /// An include target without SPF.
    IncludeTargetWithoutSpf,
    /// A redirect target without SPF.
    RedirectTargetWithoutSpf,
    /// A target name that cannot be queried.
    InvalidTargetName,
    /// A loop or excessive nesting.
    IncludeLoop,
    /// `+all` or `?all`.
    PermissiveAll,
    /// A macro that needs the sender.
    MacroUnexpandable,
    /// Use of `ptr`.
    PtrDeprecated,
    /// `redirect` in a record that has `all`.
    RedirectIgnoredWithAll,
    /// Mechanisms after `all`.
    TermsAfterAll,
    /// The audit hit its bounds.
    AuditTruncated,
}

impl ProblemCode {
    /// The snake_case code, as serialized.
    pub fn as_str(self) -> &'static str {
        match self {
            ProblemCode::NoSpfRecord => "no_spf_record",
            ProblemCode::MultipleSpfRecords => "multiple_spf_records",
            ProblemCode::SyntaxError => "syntax_error",
            ProblemCode::StringTooLong => "string_too_long",
            ProblemCode::DnsTemporaryError => "dns_temporary_error",
            ProblemCode::LookupLimitExceeded => "lookup_limit_exceeded",
            ProblemCode::VoidLookupLimitExceeded => "void_lookup_limit_exceeded",
            ProblemCode::MxTooManyRecords => "mx_too_many_records",
            ProblemCode::IncludeTargetWithoutSpf => "include_target_without_spf",
            ProblemCode::RedirectTargetWithoutSpf => "redirect_target_without_spf",
            ProblemCode::InvalidTargetName => "invalid_target_name",
            ProblemCode::IncludeLoop => "include_loop",
            ProblemCode::PermissiveAll => "permissive_all",
            ProblemCode::MacroUnexpandable => "macro_unexpandable",
            ProblemCode::PtrDeprecated => "ptr_deprecated",
            ProblemCode::RedirectIgnoredWithAll => "redirect_ignored_with_all",
            ProblemCode::TermsAfterAll => "terms_after_all",
            ProblemCode::AuditTruncated => "audit_truncated",
        }
    }
}

impl fmt::Display for ProblemCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One problem: what, how bad, where, explained.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "openapi", schema(as = SpfAuditProblem))]
pub struct Problem {
    /// Stable code.
    pub code: ProblemCode,
    /// Error or warning.
    pub severity: Severity,
    /// The domain whose record has the problem.
    pub host: String,
    /// A readable explanation.
    pub message: String,
}

impl Problem {
    /// An error-severity problem.
    pub fn error(code: ProblemCode, host: &str, message: impl Into<String>) -> Problem {
        Problem {
            code,
            severity: Severity::Error,
            host: host.to_string(),
            message: message.into(),
        }
    }

    /// A warning-severity problem.
    pub fn warning(code: ProblemCode, host: &str, message: impl Into<String>) -> Problem {
        Problem {
            code,
            severity: Severity::Warning,
            host: host.to_string(),
            message: message.into(),
        }
    }
}
