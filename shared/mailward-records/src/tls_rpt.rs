//! SMTP TLS Reporting records (RFC 8460 §3), the TXT value at `_smtp._tls.<domain>`:
//! `v=TLSRPTv1` first (exact, case-sensitive), then `rua=` with one or more comma-separated
//! `mailto:` or `https:` URIs. Extension fields are ignored. Also a generator.
//!
//! | code | severity | meaning |
//! |---|---|---|
//! | `syntax_error` | error | a segment is not `field=value` |
//! | `missing_version` | error | no `v=` field |
//! | `invalid_version` | error | `v=` is not `TLSRPTv1` |
//! | `version_not_first` | error | `v=` is not the first field |
//! | `duplicate_field` | error | a field occurs twice (the first is used) |
//! | `missing_rua` | error | no `rua=`: reports have nowhere to go |
//! | `empty_rua` | error | `rua=` is empty |
//! | `invalid_rua_uri` | error | an entry is not a URI, a `mailto:` without `local@domain`, or an `https:` without a host |
//! | `unsupported_rua_scheme` | error | an entry uses a scheme other than `mailto:` or `https:` |
//! | `multiple_records` | error | more than one `v=TLSRPTv1` record: senders must not send reports (§3) |

use crate::tags::{self, clip};
use crate::{Problem, TxtLookup, has_errors, matching_records, problem_codes};
use serde::Serialize;
use url::Url;

problem_codes! {
    /// Problem codes for TLS-RPT records (see the module table).
    pub enum TlsRptCode {
        /// A segment is not `field=value`.
        SyntaxError = ("syntax_error", Error),
        /// No `v=`.
        MissingVersion = ("missing_version", Error),
        /// `v=` is not `TLSRPTv1`.
        InvalidVersion = ("invalid_version", Error),
        /// `v=` is not first.
        VersionNotFirst = ("version_not_first", Error),
        /// A field repeats.
        DuplicateField = ("duplicate_field", Error),
        /// No `rua=`.
        MissingRua = ("missing_rua", Error),
        /// Empty `rua=`.
        EmptyRua = ("empty_rua", Error),
        /// A malformed `rua` URI.
        InvalidRuaUri = ("invalid_rua_uri", Error),
        /// A `rua` URI with another scheme.
        UnsupportedRuaScheme = ("unsupported_rua_scheme", Error),
        /// Several TLS-RPT records.
        MultipleRecords = ("multiple_records", Error),
    }
}

/// A parsed TLS-RPT record.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TlsRptRecord {
    /// `v=` as written.
    pub version: Option<String>,
    /// Every `rua` entry as written (trimmed), valid or not.
    pub rua: Vec<String>,
    /// Everything found wrong.
    pub problems: Vec<Problem<TlsRptCode>>,
}

impl TlsRptRecord {
    /// True when senders would use the record (no error).
    pub fn is_valid(&self) -> bool {
        !has_errors(&self.problems)
    }
}

/// Parses one `_smtp._tls` TXT record. Never panics.
pub fn parse(record: &str) -> TlsRptRecord {
    let list = tags::parse_with(record, tags::Names::Extended);
    let mut problems: Vec<Problem<TlsRptCode>> = list
        .issues
        .iter()
        .map(|i| Problem::new(TlsRptCode::SyntaxError, i.message()))
        .collect();
    for d in list.duplicates(false) {
        problems.push(Problem::new(
            TlsRptCode::DuplicateField,
            format!("field \"{}\" occurs more than once", clip(&d)),
        ));
    }
    let version = list.get("v").map(|t| t.value.clone());
    match &version {
        None => problems.push(Problem::new(TlsRptCode::MissingVersion, "no v= field")),
        Some(v) => {
            if list.tags.first().is_some_and(|t| t.name != "v") {
                problems.push(Problem::new(
                    TlsRptCode::VersionNotFirst,
                    "v=TLSRPTv1 must be the first field",
                ));
            }
            if v != "TLSRPTv1" {
                problems.push(Problem::new(
                    TlsRptCode::InvalidVersion,
                    format!("v={} is not TLSRPTv1", clip(v)),
                ));
            }
        }
    }
    let mut rua = Vec::new();
    match list.get("rua").map(|t| t.value.as_str()) {
        None => problems.push(Problem::new(TlsRptCode::MissingRua, "no rua= field")),
        Some("") => {
            problems.push(Problem::new(TlsRptCode::EmptyRua, "rua= is empty"));
        }
        Some(v) => {
            for entry in v.split(',') {
                let entry = entry.trim_matches(tags::is_fws);
                if let Err(p) = check_uri(entry) {
                    problems.push(p);
                }
                rua.push(entry.to_string());
            }
        }
    }
    TlsRptRecord {
        version,
        rua,
        problems,
    }
}

/// Picks the TLS-RPT record among every TXT string at `_smtp._tls.<domain>`: strings not
/// starting with `v=TLSRPTv1` are ignored; more than one is `multiple_records` (§3).
pub fn parse_records(records: &[&str]) -> TxtLookup<TlsRptRecord, TlsRptCode> {
    crate::lookup(
        matching_records(records, "v=TLSRPTv1"),
        parse,
        TlsRptCode::MultipleRecords,
        "TLS-RPT",
    )
}

/// Checks one `rua` entry: a `mailto:` with `local@domain`, or an `https:` URL with a host.
fn check_uri(entry: &str) -> Result<Url, Problem<TlsRptCode>> {
    let url = Url::parse(entry).map_err(|e| {
        Problem::new(
            TlsRptCode::InvalidRuaUri,
            format!("rua entry \"{}\" is not a URI: {e}", clip(entry)),
        )
    })?;
    match url.scheme() {
        "mailto" => {
            let ok = url
                .path()
                .split_once('@')
                .is_some_and(|(l, d)| !l.is_empty() && !d.is_empty() && !d.contains('@'));
            if ok {
                Ok(url)
            } else {
                Err(Problem::new(
                    TlsRptCode::InvalidRuaUri,
                    format!("rua entry \"{}\" is not mailto:local@domain", clip(entry)),
                ))
            }
        }
        "https" => {
            if url.host_str().is_some_and(|h| !h.is_empty()) {
                Ok(url)
            } else {
                Err(Problem::new(
                    TlsRptCode::InvalidRuaUri,
                    format!("rua entry \"{}\" has no host", clip(entry)),
                ))
            }
        }
        other => Err(Problem::new(
            TlsRptCode::UnsupportedRuaScheme,
            format!(
                "rua entry uses {}:, only mailto: and https: are defined",
                clip(other)
            ),
        )),
    }
}

/// Builds a TLS-RPT TXT value from report destinations. Each entry is a `mailto:` or `https:`
/// URI; a bare `local@domain` is taken as `mailto:`. Duplicates are dropped; entries whose
/// normalized form contains `,` `;` or whitespace are refused (they would split the record).
pub fn generate<S: AsRef<str>>(rua: &[S]) -> Result<String, Vec<Problem<TlsRptCode>>> {
    let mut problems = Vec::new();
    let mut out: Vec<String> = Vec::new();
    for entry in rua {
        let entry = entry.as_ref().trim();
        let candidate = if !entry.contains(':') && entry.contains('@') {
            format!("mailto:{entry}")
        } else {
            entry.to_string()
        };
        match check_uri(&candidate) {
            Ok(url) => {
                let s = url.as_str();
                if s.chars()
                    .any(|c| c == ',' || c == ';' || !c.is_ascii_graphic())
                {
                    problems.push(Problem::new(
                        TlsRptCode::InvalidRuaUri,
                        format!(
                            "rua entry \"{}\" cannot be published in a TXT record",
                            clip(s)
                        ),
                    ));
                } else if !out.iter().any(|o| o == s) {
                    out.push(s.to_string());
                }
            }
            Err(p) => problems.push(p),
        }
    }
    if out.is_empty() && problems.is_empty() {
        problems.push(Problem::new(
            TlsRptCode::MissingRua,
            "at least one report destination is required",
        ));
    }
    if !problems.is_empty() {
        return Err(problems);
    }
    Ok(format!("v=TLSRPTv1; rua={}", out.join(",")))
}
