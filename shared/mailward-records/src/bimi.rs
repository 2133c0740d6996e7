//! BIMI assertion records (draft-brand-indicators-for-message-identification), the TXT value at
//! `default._bimi.<domain>` (or another selector).
//!
//! `v=BIMI1` must come first (its value is compared case-insensitively, as Mail::BIMI and
//! mailbox providers do); `l=` is the https location of the SVG logo, `a=` the https location of
//! the mark certificate (VMC/CMC) PEM, `avp=` the avatar preference (`brand` or `personal`).
//! Tag names are compared case-insensitively; unknown tags are ignored. `v=BIMI1; l=; a=;` (empty
//! `l=` and an empty `a=` tag) is the declination record: valid, `declined = true`.
//!
//! The logo itself (SVG Tiny PS) and the certificate contents are checked elsewhere; here only
//! the URLs are parsed (with the `url` crate).
//!
//! | code | severity | meaning |
//! |---|---|---|
//! | `syntax_error` | error | a segment is not `tag=value` |
//! | `duplicate_tag` | error | a tag occurs twice (Mail::BIMI `DUPLICATE_KEY`) |
//! | `missing_version` | error | no `v=` tag |
//! | `invalid_version` | error | `v=` is not `BIMI1` (including empty) |
//! | `version_not_first` | error | `v=` is not the first tag |
//! | `missing_logo` | error | no `l=` tag |
//! | `empty_logo` | error | `l=` is empty and there is no `a=` tag: neither a logo nor a declination (Mail::BIMI `EMPTY_L_TAG`) |
//! | `invalid_logo_url` | error | `l=` is not an absolute URL with a host, or cannot be published in a TXT record (generator) |
//! | `logo_not_https` | error | `l=` is not https |
//! | `logo_not_svg` | warning | `l=`'s path does not end in `.svg` |
//! | `invalid_certificate_url` | error | `a=` is not an absolute URL with a host |
//! | `certificate_not_https` | error | `a=` is not https |
//! | `missing_certificate` | warning | no (or empty) `a=` on a non-declined record: Gmail and Apple Mail show logos only with a mark certificate |
//! | `invalid_avatar_preference` | warning | `avp=` is neither `brand` nor `personal` |
//! | `multiple_records` | error | more than one `v=BIMI1` record at the name ([`parse_records`]) |

use crate::tags::{self, clip};
use crate::{Generated, Problem, TxtLookup, has_errors, problem_codes};
use serde::Serialize;
use url::Url;

problem_codes! {
    /// Problem codes for BIMI records (see the module table).
    pub enum BimiCode {
        /// A segment is not `tag=value`.
        SyntaxError = ("syntax_error", Error),
        /// A tag occurs more than once.
        DuplicateTag = ("duplicate_tag", Error),
        /// No `v=`.
        MissingVersion = ("missing_version", Error),
        /// `v=` is not `BIMI1`.
        InvalidVersion = ("invalid_version", Error),
        /// `v=` is not first.
        VersionNotFirst = ("version_not_first", Error),
        /// No `l=`.
        MissingLogo = ("missing_logo", Error),
        /// Empty `l=` without `a=`.
        EmptyLogo = ("empty_logo", Error),
        /// `l=` is not a usable URL.
        InvalidLogoUrl = ("invalid_logo_url", Error),
        /// `l=` is not https.
        LogoNotHttps = ("logo_not_https", Error),
        /// `l=` does not end in `.svg`.
        LogoNotSvg = ("logo_not_svg", Warning),
        /// `a=` is not a usable URL.
        InvalidCertificateUrl = ("invalid_certificate_url", Error),
        /// `a=` is not https.
        CertificateNotHttps = ("certificate_not_https", Error),
        /// No mark certificate.
        MissingCertificate = ("missing_certificate", Warning),
        /// `avp=` unknown.
        InvalidAvatarPreference = ("invalid_avatar_preference", Warning),
        /// Several BIMI records.
        MultipleRecords = ("multiple_records", Error),
    }
}

/// The declination record a domain publishes to say it has no logo.
pub const DECLINATION_RECORD: &str = "v=BIMI1; l=; a=;";

/// A parsed BIMI assertion record.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BimiRecord {
    /// `v=` as written.
    pub version: Option<String>,
    /// `l=` as written (`Some("")` when the tag is empty).
    pub logo_url: Option<String>,
    /// `a=` as written (`Some("")` when the tag is empty).
    pub certificate_url: Option<String>,
    /// `avp=` as written.
    pub avatar_preference: Option<String>,
    /// True for the declination record (empty `l=` and empty `a=`).
    pub declined: bool,
    /// Everything found wrong or weak.
    pub problems: Vec<Problem<BimiCode>>,
}

impl BimiRecord {
    /// True when no problem is an error (a declination record is valid).
    pub fn is_valid(&self) -> bool {
        !has_errors(&self.problems)
    }
}

/// Parses and checks one BIMI record. Never panics.
pub fn parse(record: &str) -> BimiRecord {
    let list = tags::parse(record);
    let mut problems: Vec<Problem<BimiCode>> = list
        .issues
        .iter()
        .map(|i| Problem::new(BimiCode::SyntaxError, i.message()))
        .collect();
    for d in list.duplicates(true) {
        problems.push(Problem::new(
            BimiCode::DuplicateTag,
            format!("tag \"{}\" occurs more than once", clip(&d)),
        ));
    }

    let version = list.get_ignore_case("v").map(|t| t.value.clone());
    match &version {
        None => problems.push(Problem::new(BimiCode::MissingVersion, "no v= tag")),
        Some(v) => {
            if !tags::first_is(&list, "v") {
                problems.push(Problem::new(
                    BimiCode::VersionNotFirst,
                    "v= must be the first tag",
                ));
            }
            if !v.eq_ignore_ascii_case("BIMI1") {
                problems.push(Problem::new(
                    BimiCode::InvalidVersion,
                    format!("v={} is not BIMI1", clip(v)),
                ));
            }
        }
    }

    let logo_url = list.get_ignore_case("l").map(|t| t.value.clone());
    let certificate_url = list.get_ignore_case("a").map(|t| t.value.clone());
    let avatar_preference = list.get_ignore_case("avp").map(|t| t.value.clone());

    let declined = logo_url.as_deref() == Some("") && certificate_url.as_deref() == Some("");
    match logo_url.as_deref() {
        None => problems.push(Problem::new(BimiCode::MissingLogo, "no l= tag")),
        Some("") => {
            if certificate_url.is_none() {
                problems.push(Problem::new(
                    BimiCode::EmptyLogo,
                    "l= is empty and there is no a= tag (a declination is \"v=BIMI1; l=; a=;\")",
                ));
            }
        }
        Some(l) => problems.extend(check_logo_url(l)),
    }
    match certificate_url.as_deref() {
        Some(a) if !a.is_empty() => problems.extend(check_certificate_url(a)),
        _ => {
            if !declined {
                problems.push(Problem::new(
                    BimiCode::MissingCertificate,
                    "no mark certificate (a=): most mailbox providers show the logo only with a VMC or CMC",
                ));
            }
        }
    }
    if let Some(avp) = &avatar_preference
        && !avp.eq_ignore_ascii_case("brand")
        && !avp.eq_ignore_ascii_case("personal")
    {
        problems.push(Problem::new(
            BimiCode::InvalidAvatarPreference,
            format!("avp={} is neither brand nor personal", clip(avp)),
        ));
    }

    BimiRecord {
        version,
        logo_url,
        certificate_url,
        avatar_preference,
        declined,
        problems,
    }
}

/// Picks the BIMI record among every TXT string at the name: strings not starting with
/// `v=BIMI1` are ignored, and more than one BIMI record is `multiple_records` (no record is used).
pub fn parse_records(records: &[&str]) -> TxtLookup<BimiRecord, BimiCode> {
    let found: Vec<&str> = records
        .iter()
        .copied()
        .filter(|r| is_bimi_candidate(r))
        .collect();
    crate::lookup(found, parse, BimiCode::MultipleRecords, "BIMI")
}

/// `v` `=` `BIMI1` at the start, with optional whitespace and any letter case (the forms the
/// vectors accept); other strings at the name belong to something else.
fn is_bimi_candidate(record: &str) -> bool {
    let Some(rest) = record
        .trim_start_matches(tags::is_fws)
        .strip_prefix(['v', 'V'])
    else {
        return false;
    };
    let Some(rest) = rest.trim_start_matches(tags::is_fws).strip_prefix('=') else {
        return false;
    };
    rest.trim_start_matches(tags::is_fws)
        .get(..5)
        .is_some_and(|v| v.eq_ignore_ascii_case("bimi1"))
}

/// Builds the TXT value for a logo and optional certificate (`a=` only when a certificate URL
/// is given). Refuses URLs that are not https or cannot be placed in a TXT record; a logo that
/// is not `.svg` (or no certificate) comes back as a warning.
pub fn generate(
    logo_url: &str,
    certificate_url: Option<&str>,
) -> Result<Generated<BimiCode>, Vec<Problem<BimiCode>>> {
    let mut problems = check_logo_url(logo_url.trim());
    let logo = publishable(logo_url.trim(), BimiCode::InvalidLogoUrl, &mut problems);
    let cert = match certificate_url.map(str::trim).filter(|c| !c.is_empty()) {
        Some(c) => {
            problems.extend(check_certificate_url(c));
            publishable(c, BimiCode::InvalidCertificateUrl, &mut problems)
        }
        None => {
            problems.push(Problem::new(
                BimiCode::MissingCertificate,
                "no mark certificate: most mailbox providers show the logo only with a VMC or CMC",
            ));
            None
        }
    };
    if has_errors(&problems) {
        return Err(problems);
    }
    let Some(logo) = logo else {
        return Err(problems);
    };
    let value = match cert {
        Some(c) => format!("v=BIMI1; l={logo}; a={c}"),
        None => format!("v=BIMI1; l={logo}"),
    };
    Ok(Generated {
        value,
        warnings: problems,
    })
}

/// The normalized URL text, if it can go into a tag value (no `;`, `,`, spaces or controls).
fn publishable(raw: &str, code: BimiCode, problems: &mut Vec<Problem<BimiCode>>) -> Option<String> {
    let url = Url::parse(raw).ok()?;
    let s = url.as_str();
    if s.chars()
        .any(|c| c == ';' || c == ',' || !c.is_ascii_graphic())
    {
        problems.push(Problem::new(
            code,
            format!(
                "{} contains characters that cannot be published in a BIMI record",
                clip(s)
            ),
        ));
        return None;
    }
    Some(s.to_string())
}

/// Checks of `l=`: absolute https URL with a host, path ending `.svg`.
fn check_logo_url(raw: &str) -> Vec<Problem<BimiCode>> {
    let mut out = Vec::new();
    match parse_https(raw) {
        Err(UrlFault::Invalid(e)) => out.push(Problem::new(
            BimiCode::InvalidLogoUrl,
            format!("l={} is not a valid URL: {e}", clip(raw)),
        )),
        Err(UrlFault::NotHttps(scheme)) => out.push(Problem::new(
            BimiCode::LogoNotHttps,
            format!("l= uses {scheme}:, BIMI requires https"),
        )),
        Ok(url) => {
            if !url.path().to_ascii_lowercase().ends_with(".svg") {
                out.push(Problem::new(
                    BimiCode::LogoNotSvg,
                    format!(
                        "l={} does not end in .svg (BIMI logos are SVG Tiny PS)",
                        clip(raw)
                    ),
                ));
            }
        }
    }
    out
}

/// Checks of `a=`: absolute https URL with a host.
fn check_certificate_url(raw: &str) -> Vec<Problem<BimiCode>> {
    match parse_https(raw) {
        Ok(_) => Vec::new(),
        Err(UrlFault::Invalid(e)) => vec![Problem::new(
            BimiCode::InvalidCertificateUrl,
            format!("a={} is not a valid URL: {e}", clip(raw)),
        )],
        Err(UrlFault::NotHttps(scheme)) => vec![Problem::new(
            BimiCode::CertificateNotHttps,
            format!("a= uses {scheme}:, BIMI requires https"),
        )],
    }
}

/// Why a URL was refused.
enum UrlFault {
    /// Not a URL, or no host.
    Invalid(String),
    /// A scheme other than https.
    NotHttps(String),
}

/// Parses an absolute https URL with a host.
fn parse_https(raw: &str) -> Result<Url, UrlFault> {
    let url = Url::parse(raw).map_err(|e| UrlFault::Invalid(e.to_string()))?;
    if url.scheme() != "https" {
        return Err(UrlFault::NotHttps(clip(url.scheme())));
    }
    if url.host_str().is_none_or(str::is_empty) {
        return Err(UrlFault::Invalid("no host".to_string()));
    }
    Ok(url)
}
