//! Pure parsers, checkers and generators for the DNS records Mailward audits besides SPF and
//! DMARC: DKIM key records, BIMI assertion records, MTA-STS (TXT record and policy file),
//! TLS-RPT records and MX answers.
//!
//! Nothing here does I/O: callers fetch the TXT strings, policy bodies and MX answers (through the
//! `DnsResolver` port or an HTTP client) and hand them in. Every input is treated as
//! attacker-controlled: no function panics, whatever the bytes.
//!
//! Each module returns plain data with a list of [`Problem`]s. A problem's `code` is a stable
//! snake_case string (the module docs list every code with its severity); the audit maps codes to
//! its own verdicts and never has to parse a message.
//!
//! # Vectors and interpretations
//!
//! `tests/vectors.rs` runs every case of the BIMI, MTA-STS and TLS-RPT vector files and the dkimpy
//! key records (copies under `tests/fixtures/`, never edited). All pass as written: there is no
//! argued deviation. Where a vector leaves a choice, this crate decides:
//!
//! | vector | choice |
//! |---|---|
//! | BIMI `duplicate-key` (`v=bimi1; v=bimi2`) | invalid through `duplicate_tag`; the first `v=` is kept, so no `invalid_version` (Mail::BIMI keeps the last value and also says `INVALID_V_TAG`) |
//! | BIMI `empty-l` (`v=bimi1; l=`) | invalid (`empty_logo`); only empty `l=` *and* a present, empty `a=` is the declination |
//! | BIMI `valid` (no `a=`) | valid, with the `missing_certificate` warning |
//! | MTA-STS `mode-none-without-mx` | valid, with the `mx_missing_in_none_mode` warning |
//! | MTA-STS `max-age-over-limit` | invalid (`max_age_too_large`); no clamping |
//! | dkimpy `test.txt` (1024-bit RSA) | usable, with the `rsa_key_weak` warning |
//!
//! Whitespace around `=` in tag lists is accepted for every format (the MTA-STS and TLS-RPT ABNF
//! has none); version values are case-sensitive except BIMI's (`v=bimi1` is accepted, as the
//! vectors require).

pub mod bimi;
pub mod dane;
pub mod dkim;
pub mod mta_sts;
pub mod mx;
pub mod tls_rpt;

mod hostname;
mod tags;

pub use hostname::is_hostname;

use serde::Serialize;

/// How bad a problem is: `error` means the record does not do its job (a receiver ignores it or
/// it fails), `warning` means it works but is weak, risky or unusual.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    /// The record works but should be improved.
    Warning,
    /// The record is broken or unsafe.
    Error,
}

/// A module's problem-code enum: a stable snake_case name and a fixed severity, so the code
/// alone tells the audit how to score it.
pub trait ProblemCode: Copy {
    /// The stable snake_case code.
    fn as_str(&self) -> &'static str;
    /// The severity that always goes with this code.
    fn severity(&self) -> Severity;
}

/// One finding about a record: a stable code, its severity and a human-readable message
/// (messages may change; codes do not).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Problem<C> {
    /// The stable code (serialized as its snake_case name).
    pub code: C,
    /// `error` or `warning`, fixed per code.
    pub severity: Severity,
    /// Explanation for people, naming the offending value where useful.
    pub message: String,
}

impl<C: ProblemCode> Problem<C> {
    /// Builds a problem with the code's fixed severity.
    pub fn new(code: C, message: impl Into<String>) -> Self {
        Problem {
            code,
            severity: code.severity(),
            message: message.into(),
        }
    }
}

/// True when any problem in the list is an error: the record should be treated as unusable.
pub fn has_errors<C>(problems: &[Problem<C>]) -> bool {
    problems.iter().any(|p| p.severity == Severity::Error)
}

/// Declares a problem-code enum with its snake_case names and severities in one place, so the
/// serialized name, `as_str` and the severity can never disagree.
macro_rules! problem_codes {
    (
        $(#[$meta:meta])*
        pub enum $name:ident {
            $( $(#[$vmeta:meta])* $variant:ident = ($code:literal, $sev:ident), )+
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum $name {
            $( $(#[$vmeta])* $variant, )+
        }

        impl $name {
            /// Every code, in declaration order (for documentation and tests).
            pub const ALL: &'static [$name] = &[ $( $name::$variant, )+ ];
        }

        impl $crate::ProblemCode for $name {
            fn as_str(&self) -> &'static str {
                match self { $( $name::$variant => $code, )+ }
            }
            fn severity(&self) -> $crate::Severity {
                match self { $( $name::$variant => $crate::Severity::$sev, )+ }
            }
        }

        impl serde::Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str($crate::ProblemCode::as_str(self))
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str($crate::ProblemCode::as_str(self))
            }
        }
    };
}
pub(crate) use problem_codes;

/// Picks the one record of a kind among all TXT strings at a name (RFC 8461 §3.1, RFC 8460 §3):
/// strings not starting with `prefix` are someone else's and ignored; more than one match means
/// the domain has no usable record. Returns the matching records (the caller reports 0 or >1).
pub(crate) fn matching_records<'a>(records: &[&'a str], prefix: &str) -> Vec<&'a str> {
    records
        .iter()
        .copied()
        .filter(|r| r.trim_start().starts_with(prefix))
        .collect()
}

/// The outcome of looking at every TXT string at a name: the one record of the kind, if there is
/// exactly one, plus lookup-level problems (`multiple_records`). Why: RFC 8461 §3.1 and RFC 8460
/// §3 (and the BIMI draft) say several records mean none is used, which a single-record parser
/// cannot see. No matching record gives `record: None` and no problem: absence is a state the
/// audit scores, not a syntax fault.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TxtLookup<R, C> {
    /// The parsed record when exactly one string starts with the version tag.
    pub record: Option<R>,
    /// `multiple_records` when more than one does.
    pub problems: Vec<Problem<C>>,
}

/// A generated TXT value (or policy), with any warnings the inputs still deserve.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Generated<C> {
    /// The text to publish.
    pub value: String,
    /// Warnings about the inputs (errors refuse generation instead).
    pub warnings: Vec<Problem<C>>,
}

/// Shared tail of `parse_records`: one match parses, several are an error.
pub(crate) fn lookup<R, C: ProblemCode>(
    found: Vec<&str>,
    parse: fn(&str) -> R,
    multiple: C,
    what: &str,
) -> TxtLookup<R, C> {
    match found.as_slice() {
        [] => TxtLookup {
            record: None,
            problems: Vec::new(),
        },
        [one] => TxtLookup {
            record: Some(parse(one)),
            problems: Vec::new(),
        },
        many => TxtLookup {
            record: None,
            problems: vec![Problem::new(
                multiple,
                format!("{} {what} records at this name: none is used", many.len()),
            )],
        },
    }
}
