//! The DMARC policy record parser (RFC 9989 §4.7, with the RFC 7489 legacy tags).
//!
//! Rules implemented, and why:
//! * `v=DMARC1` must be the first tag; the tag name is case-insensitive, the value `DMARC1` is
//!   case-sensitive (RFC 9989 ABNF `%s"DMARC1"`). Anything else is not a DMARC record
//!   ([`RecordStatus::NotDmarc`]) and a receiver ignores it. Whitespace is allowed around `=`
//!   and `;`, and a trailing `;` is optional.
//! * Tag names are matched case-insensitively (lenient, like deployed receivers); the keyword
//!   values of `p`, `sp`, `np`, `adkim`, `aspf`, `psd`, `t` and `fo` are case-insensitive.
//! * `p` need not follow `v` (RFC 9989 dropped that RFC 7489 rule).
//! * A missing or invalid `p`, or an invalid `sp`/`np`, makes the record unusable unless `rua`
//!   holds at least one syntactically valid URI, in which case it is treated as `p=none`
//!   ([`RecordStatus::TreatAsPNone`], RFC 9989 §4.10.1 and LESSONS.md).
//! * Other syntax errors fall back to the tag's default with a warning; unknown tags are
//!   ignored with a warning; `pct`, `rf` and `ri` are recognised, parsed and reported as legacy
//!   (RFC 9989 receivers ignore them); a duplicated tag keeps its first value and is reported as
//!   an error, because RFC 6376's tag-list rules (which DMARC borrows) make such a list invalid.
//! * Report URIs are parsed with the `url` crate; `mailto:` addresses must have a local part and
//!   a host name. The RFC 7489 size suffix (`!10m`) is parsed and reported as legacy (RFC 9989
//!   removed it).

use serde::Serialize;

/// A DMARC assessment policy value (`p`, `sp`, `np`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Policy {
    /// No preference expressed (monitoring only).
    None,
    /// Treat failing mail as suspicious.
    Quarantine,
    /// Reject failing mail.
    Reject,
}

impl Policy {
    /// Parses a policy keyword case-insensitively, so callers share one definition.
    pub fn parse(value: &str) -> Option<Policy> {
        match value.to_ascii_lowercase().as_str() {
            "none" => Some(Policy::None),
            "quarantine" => Some(Policy::Quarantine),
            "reject" => Some(Policy::Reject),
            _ => None,
        }
    }

    /// The record keyword, for generating and displaying records.
    pub fn as_str(self) -> &'static str {
        match self {
            Policy::None => "none",
            Policy::Quarantine => "quarantine",
            Policy::Reject => "reject",
        }
    }

    /// One step less strict: what `t=y` asks a receiver to apply (RFC 9989: reject becomes
    /// quarantine, quarantine becomes none).
    pub fn one_step_weaker(self) -> Policy {
        match self {
            Policy::Reject => Policy::Quarantine,
            Policy::Quarantine | Policy::None => Policy::None,
        }
    }
}

/// Identifier alignment mode (`adkim`, `aspf`); serialized as the record letters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum Alignment {
    /// `r`: equal organizational domains (the default).
    #[serde(rename = "r")]
    Relaxed,
    /// `s`: identical domains.
    #[serde(rename = "s")]
    Strict,
}

/// The `psd` flag (RFC 9989): whether the publishing domain is a public suffix domain.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum PsdFlag {
    /// `y`: a public suffix domain; stops the tree walk.
    #[serde(rename = "y")]
    Yes,
    /// `n`: an organizational domain; stops the tree walk.
    #[serde(rename = "n")]
    No,
    /// `u`: unknown (the default); the walk continues.
    #[serde(rename = "u")]
    Unknown,
}

/// What a receiver does with the record, matching the fixture vocabulary.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RecordStatus {
    /// A usable record.
    Valid,
    /// Usable, but the policy is treated as `none` (bad or missing `p`, bad `sp`/`np`, valid
    /// `rua`).
    TreatAsPNone,
    /// Not a DMARC record at all (does not start with `v=DMARC1`): ignored.
    NotDmarc,
    /// A DMARC record that gives no DMARC processing (bad or missing `p` and no valid `rua`).
    NoPolicy,
}

/// How serious an issue is, for the audit's errors/warnings/info arrays.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    /// The record is unusable or its policy is weakened by the problem.
    Error,
    /// A value was ignored or defaulted; receivers may disagree.
    Warning,
    /// Worth knowing; no effect on evaluation.
    Info,
}

/// Stable issue codes. Serialized (and [`IssueCode::as_str`]) as snake_case; never renamed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum IssueCode {
    /// The record does not start with a `v` tag (and has none later).
    MissingV,
    /// The first tag is `v` but its value is not exactly `DMARC1`.
    InvalidVersion,
    /// `v=DMARC1` appears, but not as the first tag.
    VersionNotFirst,
    /// Whitespace before `v=`: the ABNF allows none; some receivers discard the record.
    LeadingWhitespace,
    /// A tag-list entry without `=`, with an empty or non-alphabetic name, or empty.
    MalformedTag,
    /// A tag appears more than once (the first value is kept).
    DuplicateTag,
    /// A tag not in RFC 9989 or RFC 7489 (ignored).
    UnknownTag,
    /// No `p` tag.
    MissingPolicy,
    /// `p` is not none|quarantine|reject.
    InvalidPolicy,
    /// `sp` is not none|quarantine|reject.
    InvalidSubdomainPolicy,
    /// `np` is not none|quarantine|reject.
    InvalidNonexistentPolicy,
    /// The record is used as if it said `p=none` (bad policy tag, valid `rua`).
    PolicyTreatedAsNone,
    /// `adkim` or `aspf` is not r|s (defaults to r).
    InvalidAlignment,
    /// `fo` is not 0, 1, d, s or a colon list of them (defaults to 0).
    InvalidFo,
    /// `fo` without `ruf` has no effect.
    FoWithoutRuf,
    /// `psd` is not y|n|u (defaults to u).
    InvalidPsd,
    /// `t` is not y|n (defaults to n).
    InvalidTesting,
    /// A `rua`/`ruf` entry is not a valid URI (or a `mailto:` without a usable address).
    InvalidUri,
    /// A `rua`/`ruf` URI with a scheme other than `mailto:` (receivers need only support mailto).
    UnsupportedUriScheme,
    /// `rua`/`ruf` present but empty.
    EmptyUriList,
    /// A `!size` suffix that is not digits with an optional k|m|g|t unit.
    InvalidSizeLimit,
    /// A valid `!size` suffix: RFC 9989 removed size limits; receivers ignore it.
    LegacySizeLimit,
    /// `pct` present: RFC 9989 removed it (use `t=y`); receivers apply the full policy.
    LegacyTagPct,
    /// `rf` present: RFC 9989 removed it.
    LegacyTagRf,
    /// `ri` present: RFC 9989 removed it.
    LegacyTagRi,
    /// `pct` is not an integer 0..=100.
    InvalidPct,
    /// `rf` is not a colon list of afrf|iodef.
    InvalidRf,
    /// `ri` is not a 32-bit unsigned integer.
    InvalidRi,
    /// `t=y`: the policy is in testing mode and applied one step weaker.
    TestingMode,
}

impl IssueCode {
    /// The stable snake_case code string (what the API and OpenAPI document show).
    pub fn as_str(self) -> &'static str {
        match self {
            IssueCode::MissingV => "missing_v",
            IssueCode::InvalidVersion => "invalid_version",
            IssueCode::VersionNotFirst => "version_not_first",
            IssueCode::LeadingWhitespace => "leading_whitespace",
            IssueCode::MalformedTag => "malformed_tag",
            IssueCode::DuplicateTag => "duplicate_tag",
            IssueCode::UnknownTag => "unknown_tag",
            IssueCode::MissingPolicy => "missing_policy",
            IssueCode::InvalidPolicy => "invalid_policy",
            IssueCode::InvalidSubdomainPolicy => "invalid_subdomain_policy",
            IssueCode::InvalidNonexistentPolicy => "invalid_nonexistent_policy",
            IssueCode::PolicyTreatedAsNone => "policy_treated_as_none",
            IssueCode::InvalidAlignment => "invalid_alignment",
            IssueCode::InvalidFo => "invalid_fo",
            IssueCode::FoWithoutRuf => "fo_without_ruf",
            IssueCode::InvalidPsd => "invalid_psd",
            IssueCode::InvalidTesting => "invalid_testing",
            IssueCode::InvalidUri => "invalid_uri",
            IssueCode::UnsupportedUriScheme => "unsupported_uri_scheme",
            IssueCode::EmptyUriList => "empty_uri_list",
            IssueCode::InvalidSizeLimit => "invalid_size_limit",
            IssueCode::LegacySizeLimit => "legacy_size_limit",
            IssueCode::LegacyTagPct => "legacy_tag_pct",
            IssueCode::LegacyTagRf => "legacy_tag_rf",
            IssueCode::LegacyTagRi => "legacy_tag_ri",
            IssueCode::InvalidPct => "invalid_pct",
            IssueCode::InvalidRf => "invalid_rf",
            IssueCode::InvalidRi => "invalid_ri",
            IssueCode::TestingMode => "testing_mode",
        }
    }
}

/// One validation finding.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Issue {
    /// Stable code.
    pub code: IssueCode,
    /// Severity.
    pub severity: Severity,
    /// The tag concerned, when there is one (lower-case).
    pub tag: Option<String>,
    /// The offending value or entry, truncated to 100 characters.
    pub value: Option<String>,
}

/// A parsed `!size` suffix on a report URI (RFC 7489 §6.2; removed by RFC 9989).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SizeLimit {
    /// The suffix as written after `!` (for example `10m`).
    pub raw: String,
    /// The limit in bytes (k/m/g/t are powers of 1024); `None` when invalid or overflowing.
    pub bytes: Option<u64>,
}

/// One `rua`/`ruf` entry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ReportUri {
    /// The entry as written, including any `!size` suffix.
    pub raw: String,
    /// The URI without the size suffix.
    pub uri: String,
    /// The scheme, lower-case, when the URI parsed.
    pub scheme: Option<String>,
    /// For `mailto:`: the decoded address.
    pub address: Option<String>,
    /// For `mailto:`: the address's host, lower-case without a trailing dot.
    pub host: Option<String>,
    /// The size suffix, when present.
    pub size_limit: Option<SizeLimit>,
    /// True when the entry is a syntactically valid URI (and, for mailto, a usable address).
    pub valid: bool,
}

/// A parsed DMARC record: every tag with its default applied, plus the issues found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DmarcRecord {
    /// The record text (TXT strings concatenated).
    pub raw: String,
    /// How a receiver treats the record.
    pub status: RecordStatus,
    /// The effective `p` (`none` when treated as none); `None` for not_dmarc and no_policy.
    pub p: Option<Policy>,
    /// `p` as written, when it was a valid keyword.
    pub p_written: Option<Policy>,
    /// `sp` as written (valid values only); see [`DmarcRecord::effective_sp`].
    pub sp: Option<Policy>,
    /// `np` as written (valid values only); see [`DmarcRecord::effective_np`].
    pub np: Option<Policy>,
    /// `psd` (default `u`).
    pub psd: PsdFlag,
    /// `t=y` (default `n`).
    pub testing: bool,
    /// `adkim` (default relaxed).
    pub adkim: Alignment,
    /// `aspf` (default relaxed).
    pub aspf: Alignment,
    /// `fo`, normalized to lower case without spaces (default `0`).
    pub fo: String,
    /// Aggregate report destinations, in record order (invalid entries included, flagged).
    pub rua: Vec<ReportUri>,
    /// Failure report destinations, in record order.
    pub ruf: Vec<ReportUri>,
    /// Legacy `pct` (RFC 7489), when present and valid.
    pub pct: Option<u8>,
    /// Legacy `rf` (RFC 7489), when present and valid.
    pub rf: Option<String>,
    /// Legacy `ri` (RFC 7489), when present and valid.
    pub ri: Option<u32>,
    /// The legacy tags present (`pct`, `rf`, `ri`), in record order.
    pub legacy_tags: Vec<String>,
    /// The unknown tag names present, in record order.
    pub unknown_tags: Vec<String>,
    /// Every finding.
    pub issues: Vec<Issue>,
}

impl DmarcRecord {
    /// The policy for existing subdomains: `sp`, else `p`.
    pub fn effective_sp(&self) -> Option<Policy> {
        if self.status == RecordStatus::TreatAsPNone {
            return self.p;
        }
        self.sp.or(self.p)
    }

    /// The policy for non-existent subdomains: `np`, else `sp`, else `p` (RFC 9989).
    pub fn effective_np(&self) -> Option<Policy> {
        if self.status == RecordStatus::TreatAsPNone {
            return self.p;
        }
        self.np.or(self.sp).or(self.p)
    }

    /// True when the record starts with `v=DMARC1` (it takes part in record selection and the
    /// tree walk, even if its policy is unusable).
    pub fn is_dmarc(&self) -> bool {
        self.status != RecordStatus::NotDmarc
    }

    /// True when a receiver applies DMARC with this record.
    pub fn is_usable(&self) -> bool {
        matches!(
            self.status,
            RecordStatus::Valid | RecordStatus::TreatAsPNone
        )
    }

    /// True when an issue with this code was found.
    pub fn has_issue(&self, code: IssueCode) -> bool {
        self.issues.iter().any(|i| i.code == code)
    }

    fn empty(raw: String) -> DmarcRecord {
        DmarcRecord {
            raw,
            status: RecordStatus::NotDmarc,
            p: None,
            p_written: None,
            sp: None,
            np: None,
            psd: PsdFlag::Unknown,
            testing: false,
            adkim: Alignment::Relaxed,
            aspf: Alignment::Relaxed,
            fo: "0".to_string(),
            rua: Vec::new(),
            ruf: Vec::new(),
            pct: None,
            rf: None,
            ri: None,
            legacy_tags: Vec::new(),
            unknown_tags: Vec::new(),
            issues: Vec::new(),
        }
    }

    fn issue(
        &mut self,
        code: IssueCode,
        severity: Severity,
        tag: Option<&str>,
        value: Option<&str>,
    ) {
        self.issues.push(Issue {
            code,
            severity,
            tag: tag.map(str::to_string),
            value: value.map(|v| v.chars().take(100).collect()),
        });
    }
}

/// True for the WSP of RFC 5234 (space and tab), the only whitespace the record ABNF allows.
fn is_wsp(c: char) -> bool {
    c == ' ' || c == '\t'
}

fn trim_wsp(s: &str) -> &str {
    s.trim_matches(|c: char| is_wsp(c) || c == '\r' || c == '\n')
}

/// Splits one tag-list entry into (lower-case name, value), or `None` when malformed.
fn split_tag(entry: &str) -> Option<(String, &str)> {
    let (name, value) = entry.split_once('=')?;
    let name = trim_wsp(name);
    if name.is_empty() || !name.bytes().all(|b| b.is_ascii_alphabetic()) {
        return None;
    }
    Some((name.to_ascii_lowercase(), trim_wsp(value)))
}

/// Parses a DMARC record given as its TXT character-strings (concatenated with no separator,
/// RFC 9989 §4.6). Bytes that are not UTF-8 are replaced, never rejected with a panic.
pub fn parse_txt(strings: &[Vec<u8>]) -> DmarcRecord {
    parse_record(&String::from_utf8_lossy(&strings.concat()))
}

/// Parses a DMARC record's text. Never panics; see the module docs for the rules.
pub fn parse_record(text: &str) -> DmarcRecord {
    let mut record = DmarcRecord::empty(text.to_string());
    let body = text.trim_start_matches(|c: char| c.is_whitespace());
    let leading_ws = body.len() != text.len();
    let mut entries = body.split(';');

    // The version tag.
    let first = entries.next().unwrap_or("");
    match split_tag(first) {
        Some((name, value)) if name == "v" => {
            if value != "DMARC1" {
                record.issue(
                    IssueCode::InvalidVersion,
                    Severity::Error,
                    Some("v"),
                    Some(value),
                );
                return record;
            }
        }
        _ => {
            let later_v = body
                .split(';')
                .skip(1)
                .filter_map(split_tag)
                .any(|(name, value)| name == "v" && value == "DMARC1");
            if later_v {
                record.issue(IssueCode::VersionNotFirst, Severity::Error, Some("v"), None);
            } else {
                record.issue(IssueCode::MissingV, Severity::Error, Some("v"), None);
            }
            return record;
        }
    }
    if leading_ws {
        record.issue(IssueCode::LeadingWhitespace, Severity::Warning, None, None);
    }

    let rest: Vec<&str> = entries.collect();
    let last_index = rest.len().saturating_sub(1);
    let mut seen: Vec<String> = vec!["v".to_string()];
    let mut p_state = TagState::Absent;
    let mut sp_state = TagState::Absent;
    let mut np_state = TagState::Absent;
    let mut has_fo = false;
    let mut has_ruf = false;

    for (index, entry) in rest.iter().enumerate() {
        if trim_wsp(entry).is_empty() {
            // A single trailing `;` (optionally followed by WSP) is allowed.
            if index != last_index {
                record.issue(
                    IssueCode::MalformedTag,
                    Severity::Warning,
                    None,
                    Some(entry),
                );
            }
            continue;
        }
        let Some((name, value)) = split_tag(entry) else {
            record.issue(
                IssueCode::MalformedTag,
                Severity::Warning,
                None,
                Some(entry),
            );
            continue;
        };
        if seen.contains(&name) {
            record.issue(
                IssueCode::DuplicateTag,
                Severity::Error,
                Some(&name),
                Some(value),
            );
            continue;
        }
        seen.push(name.clone());
        let lower = value.to_ascii_lowercase();
        match name.as_str() {
            "p" => p_state = policy_tag(&mut record, "p", value, IssueCode::InvalidPolicy),
            "sp" => {
                sp_state = policy_tag(&mut record, "sp", value, IssueCode::InvalidSubdomainPolicy)
            }
            "np" => {
                np_state = policy_tag(
                    &mut record,
                    "np",
                    value,
                    IssueCode::InvalidNonexistentPolicy,
                )
            }
            "adkim" | "aspf" => {
                let mode = match lower.as_str() {
                    "r" => Some(Alignment::Relaxed),
                    "s" => Some(Alignment::Strict),
                    _ => None,
                };
                match mode {
                    Some(mode) if name == "adkim" => record.adkim = mode,
                    Some(mode) => record.aspf = mode,
                    None => record.issue(
                        IssueCode::InvalidAlignment,
                        Severity::Warning,
                        Some(&name),
                        Some(value),
                    ),
                }
            }
            "psd" => match lower.as_str() {
                "y" => record.psd = PsdFlag::Yes,
                "n" => record.psd = PsdFlag::No,
                "u" => record.psd = PsdFlag::Unknown,
                _ => record.issue(
                    IssueCode::InvalidPsd,
                    Severity::Warning,
                    Some("psd"),
                    Some(value),
                ),
            },
            "t" => match lower.as_str() {
                "y" => record.testing = true,
                "n" => record.testing = false,
                _ => record.issue(
                    IssueCode::InvalidTesting,
                    Severity::Warning,
                    Some("t"),
                    Some(value),
                ),
            },
            "fo" => {
                has_fo = true;
                let normalized: String = lower.chars().filter(|c| !is_wsp(*c)).collect();
                let ok = !normalized.is_empty()
                    && normalized
                        .split(':')
                        .all(|opt| matches!(opt, "0" | "1" | "d" | "s"));
                if ok {
                    record.fo = normalized;
                } else {
                    record.issue(
                        IssueCode::InvalidFo,
                        Severity::Warning,
                        Some("fo"),
                        Some(value),
                    );
                }
            }
            "rua" | "ruf" => {
                if name == "ruf" {
                    has_ruf = true;
                }
                let uris = parse_uri_list(&mut record, &name, value);
                if name == "rua" {
                    record.rua = uris;
                } else {
                    record.ruf = uris;
                }
            }
            "pct" => {
                record.legacy_tags.push(name.clone());
                record.issue(
                    IssueCode::LegacyTagPct,
                    Severity::Warning,
                    Some("pct"),
                    Some(value),
                );
                match value.parse::<u8>() {
                    Ok(pct) if pct <= 100 && value.bytes().all(|b| b.is_ascii_digit()) => {
                        record.pct = Some(pct)
                    }
                    _ => record.issue(
                        IssueCode::InvalidPct,
                        Severity::Warning,
                        Some("pct"),
                        Some(value),
                    ),
                }
            }
            "rf" => {
                record.legacy_tags.push(name.clone());
                record.issue(
                    IssueCode::LegacyTagRf,
                    Severity::Info,
                    Some("rf"),
                    Some(value),
                );
                let ok = lower
                    .split(':')
                    .all(|f| matches!(trim_wsp(f), "afrf" | "iodef"));
                if ok {
                    record.rf = Some(lower.chars().filter(|c| !is_wsp(*c)).collect());
                } else {
                    record.issue(
                        IssueCode::InvalidRf,
                        Severity::Warning,
                        Some("rf"),
                        Some(value),
                    );
                }
            }
            "ri" => {
                record.legacy_tags.push(name.clone());
                record.issue(
                    IssueCode::LegacyTagRi,
                    Severity::Info,
                    Some("ri"),
                    Some(value),
                );
                match value.parse::<u32>() {
                    Ok(ri) if value.bytes().all(|b| b.is_ascii_digit()) => record.ri = Some(ri),
                    _ => record.issue(
                        IssueCode::InvalidRi,
                        Severity::Warning,
                        Some("ri"),
                        Some(value),
                    ),
                }
            }
            "v" => {
                // Unreachable in practice (`v` is already in `seen`), kept for clarity.
            }
            _ => {
                record.unknown_tags.push(name.clone());
                record.issue(
                    IssueCode::UnknownTag,
                    Severity::Warning,
                    Some(&name),
                    Some(value),
                );
            }
        }
    }

    if has_fo && !has_ruf {
        record.issue(IssueCode::FoWithoutRuf, Severity::Info, Some("fo"), None);
    }
    if p_state == TagState::Absent {
        record.issue(IssueCode::MissingPolicy, Severity::Error, Some("p"), None);
    }
    let policy_broken = p_state != TagState::Valid
        || sp_state == TagState::Invalid
        || np_state == TagState::Invalid;
    if policy_broken {
        if record.rua.iter().any(|u| u.valid) {
            record.status = RecordStatus::TreatAsPNone;
            record.p = Some(Policy::None);
            record.issue(
                IssueCode::PolicyTreatedAsNone,
                Severity::Error,
                Some("p"),
                None,
            );
        } else {
            record.status = RecordStatus::NoPolicy;
            record.p = None;
        }
    } else {
        record.status = RecordStatus::Valid;
        record.p = record.p_written;
    }
    if record.testing && record.is_usable() {
        record.issue(IssueCode::TestingMode, Severity::Info, Some("t"), None);
    }
    record
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum TagState {
    Absent,
    Valid,
    Invalid,
}

fn policy_tag(record: &mut DmarcRecord, tag: &str, value: &str, code: IssueCode) -> TagState {
    match Policy::parse(value) {
        Some(policy) => {
            match tag {
                "p" => record.p_written = Some(policy),
                "sp" => record.sp = Some(policy),
                _ => record.np = Some(policy),
            }
            TagState::Valid
        }
        None => {
            record.issue(code, Severity::Error, Some(tag), Some(value));
            TagState::Invalid
        }
    }
}

fn parse_uri_list(record: &mut DmarcRecord, tag: &str, value: &str) -> Vec<ReportUri> {
    let mut out = Vec::new();
    if value.is_empty() {
        record.issue(IssueCode::EmptyUriList, Severity::Warning, Some(tag), None);
        return out;
    }
    // Bound the work on hostile input: no receiver sends to hundreds of destinations.
    for raw in value.split(',').map(trim_wsp).take(100) {
        let uri = parse_report_uri(raw);
        if let Some(limit) = &uri.size_limit {
            if limit.bytes.is_some() {
                record.issue(
                    IssueCode::LegacySizeLimit,
                    Severity::Info,
                    Some(tag),
                    Some(raw),
                );
            } else {
                record.issue(
                    IssueCode::InvalidSizeLimit,
                    Severity::Warning,
                    Some(tag),
                    Some(raw),
                );
            }
        }
        if !uri.valid {
            record.issue(
                IssueCode::InvalidUri,
                Severity::Warning,
                Some(tag),
                Some(raw),
            );
        } else if uri.scheme.as_deref() != Some("mailto") {
            record.issue(
                IssueCode::UnsupportedUriScheme,
                Severity::Warning,
                Some(tag),
                Some(raw),
            );
        }
        out.push(uri);
    }
    out
}

/// Parses a size suffix: `1*DIGIT [k|m|g|t]` (case-insensitive unit, powers of 1024).
fn parse_size(raw: &str) -> Option<u64> {
    let lower = raw.to_ascii_lowercase();
    let (digits, multiplier) = match lower.as_bytes().last()? {
        b'k' => (&lower[..lower.len() - 1], 1u64 << 10),
        b'm' => (&lower[..lower.len() - 1], 1u64 << 20),
        b'g' => (&lower[..lower.len() - 1], 1u64 << 30),
        b't' => (&lower[..lower.len() - 1], 1u64 << 40),
        _ => (lower.as_str(), 1),
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse::<u64>().ok()?.checked_mul(multiplier)
}

/// Decodes `%XX` escapes; `None` on a bad escape or non-UTF-8 result.
fn percent_decode(s: &str) -> Option<String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = s.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// Parses one report URI entry (with an optional `!size` suffix). Public so the generator and
/// the API can validate user-supplied addresses with the same rules.
pub fn parse_report_uri(raw: &str) -> ReportUri {
    // `!` must be percent-encoded inside a DMARC URI, so the first `!` starts the size suffix.
    let (uri_text, size_limit) = match raw.split_once('!') {
        Some((uri, size)) => (
            uri,
            Some(SizeLimit {
                raw: size.to_string(),
                bytes: parse_size(size),
            }),
        ),
        None => (raw, None),
    };
    let mut out = ReportUri {
        raw: raw.to_string(),
        uri: uri_text.to_string(),
        scheme: None,
        address: None,
        host: None,
        size_limit,
        valid: false,
    };
    if uri_text.is_empty() || uri_text.len() > 2048 || uri_text.contains(char::is_whitespace) {
        return out;
    }
    let Ok(url) = url::Url::parse(uri_text) else {
        return out;
    };
    let scheme = url.scheme().to_ascii_lowercase();
    out.scheme = Some(scheme.clone());
    if scheme != "mailto" {
        out.valid = true;
        return out;
    }
    let Some(address) = percent_decode(url.path()) else {
        return out;
    };
    let Some((local, host)) = address.rsplit_once('@') else {
        return out;
    };
    let host = host.strip_suffix('.').unwrap_or(host).to_ascii_lowercase();
    if local.is_empty() || !crate::names::is_host_name(&host) {
        return out;
    }
    out.address = Some(address.clone());
    out.host = Some(host);
    out.valid = true;
    out
}
