//! MTA-STS (RFC 8461): the `_mta-sts.<domain>` TXT record, the policy file served at
//! `https://mta-sts.<domain>/.well-known/mta-sts.txt`, MX pattern matching (§4.1), a check of the
//! policy's patterns against the domain's real MX hosts, and a generator for hosted policies.
//!
//! TXT record: `v=STSv1` first (exact, case-sensitive), `id=` of 1 to 32 letters and digits;
//! extension fields are ignored. Policy: `key: value` lines separated by CRLF (bare LF accepted;
//! blank lines skipped); `version: STSv1`, `mode: enforce|testing|none`, one or more `mx:`
//! patterns, `max_age` in seconds (at most 31557600); unknown keys are ignored; keys and values
//! are case-sensitive as in the RFC's ABNF. Fetching the policy (HTTPS, no redirects,
//! `text/plain`) is the caller's job.
//!
//! | code | severity | meaning |
//! |---|---|---|
//! | `syntax_error` | error | TXT: a segment is not `field=value` |
//! | `missing_version` | error | TXT: no `v=` field |
//! | `invalid_version` | error | TXT: `v=` is not `STSv1` |
//! | `version_not_first` | error | TXT: `v=` is not the first field |
//! | `missing_id` | error | TXT: no `id=` |
//! | `invalid_id` | error | TXT: `id=` is empty, longer than 32 or not alphanumeric |
//! | `duplicate_field` | error | TXT: a field occurs twice (the first is reported) |
//! | `multiple_records` | error | more than one `v=STSv1` TXT record: senders assume no policy (§3.1) |
//! | `policy_syntax_error` | error | policy: a non-blank line is not `key: value` (garbage, HTML) |
//! | `policy_missing_version` | error | policy: no `version` |
//! | `policy_invalid_version` | error | policy: `version` is not `STSv1` |
//! | `missing_mode` | error | policy: no `mode` |
//! | `invalid_mode` | error | policy: `mode` is not enforce, testing or none |
//! | `missing_mx` | error | policy: no `mx` with mode enforce or testing |
//! | `mx_missing_in_none_mode` | warning | policy: no `mx` with mode none (commonly accepted; a strict parser may reject it) |
//! | `invalid_mx_pattern` | error | an `mx` value is not a host name or `*.` plus a host name |
//! | `duplicate_mx_pattern` | warning | the same `mx` pattern twice |
//! | `missing_max_age` | error | policy: no `max_age` |
//! | `invalid_max_age` | error | policy: `max_age` is not 1 to 10 digits |
//! | `max_age_too_large` | error | policy: `max_age` over 31557600 (RFC 8461 §3.2; some senders clamp instead) |
//! | `max_age_short` | warning | policy: `max_age` under 86400: the policy protects little between fetches |
//! | `duplicate_key` | error | policy: `version`, `mode` or `max_age` occurs twice (the first value is reported) |
//! | `mx_not_covered` | error | [`check_mx_coverage`]: an MX host matches no pattern; in enforce mode senders refuse to deliver to it |
//! | `pattern_matches_no_mx` | warning | [`check_mx_coverage`]: a pattern matches none of the MX hosts (stale entry) |
//! | `max_age_out_of_range` | error | [`generate`]: `max_age` outside 86400..=31557600 (SPEC §8.2) |

use crate::hostname::{is_hostname, normalize};
use crate::tags::{self, clip};
use crate::{Problem, TxtLookup, has_errors, matching_records, problem_codes};
use serde::Serialize;
use sha2::{Digest, Sha256};

problem_codes! {
    /// Problem codes for MTA-STS (see the module table).
    pub enum MtaStsCode {
        /// TXT segment is not `field=value`.
        SyntaxError = ("syntax_error", Error),
        /// TXT has no `v=`.
        MissingVersion = ("missing_version", Error),
        /// TXT `v=` is not `STSv1`.
        InvalidVersion = ("invalid_version", Error),
        /// TXT `v=` is not first.
        VersionNotFirst = ("version_not_first", Error),
        /// TXT has no `id=`.
        MissingId = ("missing_id", Error),
        /// TXT `id=` is malformed.
        InvalidId = ("invalid_id", Error),
        /// TXT field repeated.
        DuplicateField = ("duplicate_field", Error),
        /// Several STS TXT records.
        MultipleRecords = ("multiple_records", Error),
        /// Policy line is not `key: value`.
        PolicySyntaxError = ("policy_syntax_error", Error),
        /// Policy has no `version`.
        PolicyMissingVersion = ("policy_missing_version", Error),
        /// Policy `version` is not `STSv1`.
        PolicyInvalidVersion = ("policy_invalid_version", Error),
        /// Policy has no `mode`.
        MissingMode = ("missing_mode", Error),
        /// Policy `mode` unknown.
        InvalidMode = ("invalid_mode", Error),
        /// Policy has no `mx` (enforce/testing).
        MissingMx = ("missing_mx", Error),
        /// Policy has no `mx` (mode none).
        MxMissingInNoneMode = ("mx_missing_in_none_mode", Warning),
        /// An `mx` pattern is malformed.
        InvalidMxPattern = ("invalid_mx_pattern", Error),
        /// An `mx` pattern repeats.
        DuplicateMxPattern = ("duplicate_mx_pattern", Warning),
        /// Policy has no `max_age`.
        MissingMaxAge = ("missing_max_age", Error),
        /// Policy `max_age` is not a number.
        InvalidMaxAge = ("invalid_max_age", Error),
        /// Policy `max_age` over one year.
        MaxAgeTooLarge = ("max_age_too_large", Error),
        /// Policy `max_age` under a day.
        MaxAgeShort = ("max_age_short", Warning),
        /// Policy key repeated.
        DuplicateKey = ("duplicate_key", Error),
        /// An MX host is not covered by any pattern.
        MxNotCovered = ("mx_not_covered", Error),
        /// A pattern matches no MX host.
        PatternMatchesNoMx = ("pattern_matches_no_mx", Warning),
        /// Generator: `max_age` outside the service's bounds.
        MaxAgeOutOfRange = ("max_age_out_of_range", Error),
    }
}

/// RFC 8461 §3.2's ceiling for `max_age` (one year of 365.25 days).
pub const MAX_AGE_LIMIT: u64 = 31_557_600;
/// The smallest `max_age` Mailward publishes (SPEC §8.2), also the `max_age_short` threshold.
pub const MIN_HOSTED_MAX_AGE: u64 = 86_400;

/// A parsed `_mta-sts` TXT record.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StsTxtRecord {
    /// `v=` as written.
    pub version: Option<String>,
    /// `id=` as written.
    pub id: Option<String>,
    /// Everything found wrong.
    pub problems: Vec<Problem<MtaStsCode>>,
}

impl StsTxtRecord {
    /// True when a sender would accept the record (no error).
    pub fn is_valid(&self) -> bool {
        !has_errors(&self.problems)
    }
}

/// Parses one `_mta-sts` TXT record. Never panics.
pub fn parse_txt(record: &str) -> StsTxtRecord {
    let list = tags::parse_with(record, tags::Names::Extended);
    let mut problems: Vec<Problem<MtaStsCode>> = list
        .issues
        .iter()
        .map(|i| Problem::new(MtaStsCode::SyntaxError, i.message()))
        .collect();
    for d in list.duplicates(false) {
        problems.push(Problem::new(
            MtaStsCode::DuplicateField,
            format!("field \"{}\" occurs more than once", clip(&d)),
        ));
    }
    let version = list.get("v").map(|t| t.value.clone());
    match &version {
        None => problems.push(Problem::new(MtaStsCode::MissingVersion, "no v= field")),
        Some(v) => {
            if list.tags.first().is_some_and(|t| t.name != "v") {
                problems.push(Problem::new(
                    MtaStsCode::VersionNotFirst,
                    "v=STSv1 must be the first field",
                ));
            }
            if v != "STSv1" {
                problems.push(Problem::new(
                    MtaStsCode::InvalidVersion,
                    format!("v={} is not STSv1", clip(v)),
                ));
            }
        }
    }
    let id = list.get("id").map(|t| t.value.clone());
    match &id {
        None => problems.push(Problem::new(MtaStsCode::MissingId, "no id= field")),
        Some(id) if !is_valid_id(id) => problems.push(Problem::new(
            MtaStsCode::InvalidId,
            format!("id={} must be 1 to 32 letters or digits", clip(id)),
        )),
        Some(_) => {}
    }
    StsTxtRecord {
        version,
        id,
        problems,
    }
}

/// `1*32(ALPHA / DIGIT)`.
fn is_valid_id(id: &str) -> bool {
    (1..=32).contains(&id.len()) && id.bytes().all(|b| b.is_ascii_alphanumeric())
}

/// Picks the STS record among every TXT string at `_mta-sts.<domain>`: strings not starting with
/// `v=STSv1` are ignored; more than one is `multiple_records` and no policy applies (§3.1).
pub fn parse_txt_records(records: &[&str]) -> TxtLookup<StsTxtRecord, MtaStsCode> {
    crate::lookup(
        matching_records(records, "v=STSv1"),
        parse_txt,
        MtaStsCode::MultipleRecords,
        "MTA-STS",
    )
}

/// The policy mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// Senders refuse MX hosts without valid TLS.
    Enforce,
    /// Senders deliver anyway and report failures (TLS-RPT).
    Testing,
    /// No policy applies.
    None,
}

impl Mode {
    /// The policy-file spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Enforce => "enforce",
            Mode::Testing => "testing",
            Mode::None => "none",
        }
    }

    /// Parses the policy-file spelling (case-sensitive, as the ABNF says).
    pub fn parse(s: &str) -> Option<Mode> {
        match s {
            "enforce" => Some(Mode::Enforce),
            "testing" => Some(Mode::Testing),
            "none" => Some(Mode::None),
            _ => None,
        }
    }
}

/// A parsed policy file.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StsPolicy {
    /// `version` as written (first occurrence).
    pub version: Option<String>,
    /// `mode`, when it is one of the three.
    pub mode: Option<Mode>,
    /// Every `mx` value, as written, in order.
    pub mx: Vec<String>,
    /// `max_age` when it is a number (even when over the limit).
    pub max_age: Option<u64>,
    /// Everything found wrong or weak.
    pub problems: Vec<Problem<MtaStsCode>>,
}

impl StsPolicy {
    /// True when a sender would accept the policy (no error).
    pub fn is_valid(&self) -> bool {
        !has_errors(&self.problems)
    }
}

/// Parses a policy body (already decoded as text). Never panics.
pub fn parse_policy(body: &str) -> StsPolicy {
    let mut problems = Vec::new();
    let mut version: Option<String> = None;
    let mut mode_raw: Option<String> = None;
    let mut max_age_raw: Option<String> = None;
    let mut mx: Vec<String> = Vec::new();

    for (n, line) in body.split('\n').enumerate() {
        let line = line.strip_suffix('\r').unwrap_or(line);
        if line.trim().is_empty() {
            continue;
        }
        let Some((key, value)) = line.split_once(':') else {
            problems.push(Problem::new(
                MtaStsCode::PolicySyntaxError,
                format!("line {}: \"{}\" is not key: value", n + 1, clip(line)),
            ));
            continue;
        };
        if !is_policy_key(key) {
            problems.push(Problem::new(
                MtaStsCode::PolicySyntaxError,
                format!("line {}: \"{}\" is not a valid key", n + 1, clip(key)),
            ));
            continue;
        }
        let value = value.trim_matches([' ', '\t']).to_string();
        let slot = match key {
            "version" => &mut version,
            "mode" => &mut mode_raw,
            "max_age" => &mut max_age_raw,
            "mx" => {
                mx.push(value);
                continue;
            }
            _ => continue,
        };
        if slot.is_some() {
            problems.push(Problem::new(
                MtaStsCode::DuplicateKey,
                format!(
                    "line {}: {key} appears more than once; the first is used",
                    n + 1
                ),
            ));
        } else {
            *slot = Some(value);
        }
    }

    match version.as_deref() {
        None => problems.push(Problem::new(
            MtaStsCode::PolicyMissingVersion,
            "no version line",
        )),
        Some("STSv1") => {}
        Some(v) => problems.push(Problem::new(
            MtaStsCode::PolicyInvalidVersion,
            format!("version {} is not STSv1", clip(v)),
        )),
    }
    let mode = match mode_raw.as_deref() {
        None => {
            problems.push(Problem::new(MtaStsCode::MissingMode, "no mode line"));
            None
        }
        Some(m) => {
            let mode = Mode::parse(m);
            if mode.is_none() {
                problems.push(Problem::new(
                    MtaStsCode::InvalidMode,
                    format!("mode {} is not enforce, testing or none", clip(m)),
                ));
            }
            mode
        }
    };
    if mx.is_empty() {
        if mode == Some(Mode::None) {
            problems.push(Problem::new(
                MtaStsCode::MxMissingInNoneMode,
                "no mx line; accepted for mode none, but RFC 8461 asks for at least one",
            ));
        } else {
            problems.push(Problem::new(MtaStsCode::MissingMx, "no mx line"));
        }
    }
    problems.extend(check_patterns(&mx));
    let max_age = match max_age_raw.as_deref() {
        None => {
            problems.push(Problem::new(MtaStsCode::MissingMaxAge, "no max_age line"));
            None
        }
        Some(raw) => parse_max_age(raw, &mut problems),
    };

    StsPolicy {
        version,
        mode,
        mx,
        max_age,
        problems,
    }
}

/// `sts-policy-field-name`: `(ALPHA / DIGIT) *31(ALPHA / DIGIT / "_" / "-" / ".")`.
fn is_policy_key(key: &str) -> bool {
    (1..=32).contains(&key.len())
        && key
            .bytes()
            .next()
            .is_some_and(|b| b.is_ascii_alphanumeric())
        && key
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'))
}

/// `max_age = 1*10DIGIT`, at most [`MAX_AGE_LIMIT`]; under a day is a warning.
fn parse_max_age(raw: &str, problems: &mut Vec<Problem<MtaStsCode>>) -> Option<u64> {
    if raw.is_empty() || raw.len() > 10 || !raw.bytes().all(|b| b.is_ascii_digit()) {
        problems.push(Problem::new(
            MtaStsCode::InvalidMaxAge,
            format!(
                "max_age {} is not a number of seconds (1 to 10 digits)",
                clip(raw)
            ),
        ));
        return None;
    }
    let value = raw.parse::<u64>().ok()?;
    if value > MAX_AGE_LIMIT {
        problems.push(Problem::new(
            MtaStsCode::MaxAgeTooLarge,
            format!("max_age {value} is over {MAX_AGE_LIMIT}"),
        ));
    } else if value < MIN_HOSTED_MAX_AGE {
        problems.push(Problem::new(
            MtaStsCode::MaxAgeShort,
            format!("max_age {value} is under a day; weeks are recommended"),
        ));
    }
    Some(value)
}

/// Syntax and duplicate checks over `mx` patterns.
fn check_patterns(patterns: &[String]) -> Vec<Problem<MtaStsCode>> {
    let mut out = Vec::new();
    let mut seen: Vec<String> = Vec::new();
    for p in patterns {
        if !is_valid_pattern(p) {
            out.push(Problem::new(
                MtaStsCode::InvalidMxPattern,
                format!("mx {} is not a host name or *.host name", clip(p)),
            ));
            continue;
        }
        let norm = normalize(p);
        if seen.contains(&norm) {
            out.push(Problem::new(
                MtaStsCode::DuplicateMxPattern,
                format!("mx {} is listed more than once", clip(p)),
            ));
        } else {
            seen.push(norm);
        }
    }
    out
}

/// `["*."] Domain`.
fn is_valid_pattern(pattern: &str) -> bool {
    let rest = pattern.strip_prefix("*.").unwrap_or(pattern);
    is_hostname(rest)
}

/// Whether an MX host matches a policy `mx` pattern (RFC 8461 §4.1): case-insensitive, one
/// trailing dot ignored on either side, and a leading `*.` matches exactly one left-most label
/// (`*.example.net` matches `mx1.example.net`, not `example.net` or `a.b.example.net`).
pub fn mx_pattern_matches(pattern: &str, host: &str) -> bool {
    let pattern = normalize(pattern);
    let host = normalize(host);
    if host.is_empty() || pattern.is_empty() {
        return false;
    }
    match pattern.strip_prefix("*.") {
        Some(suffix) => match host.split_once('.') {
            Some((label, rest)) => !label.is_empty() && !suffix.is_empty() && rest == suffix,
            None => false,
        },
        None => pattern == host,
    }
}

/// The result of [`check_mx_coverage`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MxCoverage {
    /// MX hosts (normalized) that no pattern matches.
    pub uncovered_hosts: Vec<String>,
    /// Patterns (as written) that match no MX host.
    pub unused_patterns: Vec<String>,
    /// `mx_not_covered` and `pattern_matches_no_mx` findings.
    pub problems: Vec<Problem<MtaStsCode>>,
}

/// Checks a policy's `mx` patterns against the domain's real MX hosts: every MX must be covered
/// (in enforce mode an uncovered MX stops receiving mail from MTA-STS senders), and a pattern
/// matching nothing is likely stale. A null-MX root (`""` or `"."`) is skipped. Callers skip
/// the check for mode none.
pub fn check_mx_coverage<P: AsRef<str>, H: AsRef<str>>(
    patterns: &[P],
    mx_hosts: &[H],
) -> MxCoverage {
    let hosts: Vec<String> = mx_hosts
        .iter()
        .map(|h| normalize(h.as_ref()))
        .filter(|h| !h.is_empty())
        .collect();
    let mut problems = Vec::new();
    let mut uncovered_hosts = Vec::new();
    for h in &hosts {
        if !patterns.iter().any(|p| mx_pattern_matches(p.as_ref(), h))
            && !uncovered_hosts.contains(h)
        {
            problems.push(Problem::new(
                MtaStsCode::MxNotCovered,
                format!("MX host {} matches no mx pattern in the policy", clip(h)),
            ));
            uncovered_hosts.push(h.clone());
        }
    }
    let mut unused_patterns = Vec::new();
    for p in patterns {
        let p = p.as_ref();
        if !hosts.iter().any(|h| mx_pattern_matches(p, h)) {
            problems.push(Problem::new(
                MtaStsCode::PatternMatchesNoMx,
                format!("mx pattern {} matches none of the MX hosts", clip(p)),
            ));
            unused_patterns.push(p.to_string());
        }
    }
    MxCoverage {
        uncovered_hosts,
        unused_patterns,
        problems,
    }
}

/// A generated hosted policy: the policy file, its TXT record and the id they share.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct GeneratedPolicy {
    /// The policy file body (CRLF lines).
    pub policy: String,
    /// The `_mta-sts` TXT value, `v=STSv1; id=<id>`.
    pub txt: String,
    /// The policy id: the first 32 hex digits of the SHA-256 of the policy text, so it changes
    /// whenever the policy does (RFC 8461 §3.1) and stays put when nothing changed.
    pub id: String,
}

/// Builds a policy file and TXT record from a mode, MX patterns and `max_age` (bounded to
/// 86400..=31557600 as SPEC §8.2 says). Patterns are lower-cased, stripped of a trailing dot and
/// de-duplicated; at least one is required unless the mode is none.
pub fn generate<S: AsRef<str>>(
    mode: Mode,
    mx: &[S],
    max_age: u64,
) -> Result<GeneratedPolicy, Vec<Problem<MtaStsCode>>> {
    let mut problems = Vec::new();
    if !(MIN_HOSTED_MAX_AGE..=MAX_AGE_LIMIT).contains(&max_age) {
        problems.push(Problem::new(
            MtaStsCode::MaxAgeOutOfRange,
            format!("max_age {max_age} is outside {MIN_HOSTED_MAX_AGE}..={MAX_AGE_LIMIT}"),
        ));
    }
    let mut patterns: Vec<String> = Vec::new();
    for p in mx {
        let p = p.as_ref().trim();
        if !is_valid_pattern(p) {
            problems.push(Problem::new(
                MtaStsCode::InvalidMxPattern,
                format!("mx {} is not a host name or *.host name", clip(p)),
            ));
            continue;
        }
        let norm = normalize(p);
        if !patterns.contains(&norm) {
            patterns.push(norm);
        }
    }
    if patterns.is_empty() && mode != Mode::None && problems.is_empty() {
        problems.push(Problem::new(
            MtaStsCode::MissingMx,
            "at least one mx pattern is required for enforce or testing",
        ));
    }
    if has_errors(&problems) {
        return Err(problems);
    }
    let mut policy = format!("version: STSv1\r\nmode: {}\r\n", mode.as_str());
    for p in &patterns {
        policy.push_str("mx: ");
        policy.push_str(p);
        policy.push_str("\r\n");
    }
    policy.push_str(&format!("max_age: {max_age}\r\n"));
    let digest = Sha256::digest(policy.as_bytes());
    let id: String = digest.iter().take(16).map(|b| format!("{b:02x}")).collect();
    Ok(GeneratedPolicy {
        txt: format!("v=STSv1; id={id}"),
        policy,
        id,
    })
}
