//! The BIMI dimension: the record at `default._bimi.<domain>` (`mailward_records::bimi`), logo
//! URL presence/https/`.svg` and certificate URL presence/https. Fetching and validating the SVG
//! and the mark certificate (VMC) is out of scope here.
//!
//! | code | category | meaning |
//! |---|---|---|
//! | `bimi_record_missing` | warning | no BIMI record |
//! | `bimi_declined` | warning | the declination record (`v=BIMI1; l=; a=;`) |
//! | `dmarc_not_enforced_for_bimi` | warning | a record exists but DMARC is not at quarantine/reject (mailbox providers ignore BIMI) |
//! | `dns_lookup_failed` | warning | the lookup failed: unknown, not missing |
//! | every `mailward_records::bimi` code | its severity | e.g. `logo_not_https` (error), `missing_certificate` (warning), `multiple_records` (error) |

use crate::lookup::txt;
use crate::score::Dimension;
use crate::verdict::{Assessment, DNS_LOOKUP_FAILED, Findings};
use mailward_domain::dns::{DnsError, DnsResolver};
use mailward_records::bimi;
use mailward_records::{ProblemCode, Severity};
use serde::{Deserialize, Serialize};

/// The logo URL checks.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct BimiLogo {
    /// `l=` as written.
    pub url: Option<String>,
    /// A non-empty `l=`.
    pub present: bool,
    /// It is an https URL.
    pub https: bool,
    /// Its path ends in `.svg`.
    pub svg: bool,
}

/// The certificate URL checks.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct BimiCertificate {
    /// `a=` as written.
    pub url: Option<String>,
    /// A non-empty `a=`.
    pub present: bool,
    /// It is an https URL.
    pub https: bool,
}

/// The `bimi` object of the audit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct BimiResult {
    /// Score, verdict, codes and state.
    #[serde(flatten)]
    pub assessment: Assessment,
    /// The record.
    pub record: Option<String>,
    /// True for the declination record.
    pub declined: bool,
    /// Logo checks.
    pub logo: BimiLogo,
    /// Certificate checks.
    pub certificate: BimiCertificate,
}

/// The TXT values at `default._bimi.<domain>`.
pub(crate) async fn gather(
    resolver: &dyn DnsResolver,
    domain: &str,
) -> Result<Vec<String>, DnsError> {
    txt(resolver, &format!("default._bimi.{domain}")).await
}

fn is_https(url: &str) -> bool {
    url.trim().to_ascii_lowercase().starts_with("https://")
}

fn is_svg(url: &str) -> bool {
    let path = url.split(['?', '#']).next().unwrap_or("");
    path.to_ascii_lowercase().ends_with(".svg")
}

/// Builds the `bimi` object; `dmarc_enforced` says whether DMARC is at quarantine or reject
/// (`None`: unknown because the DMARC lookup failed, so no finding is drawn from it).
pub(crate) fn assess(
    raw: &Result<Vec<String>, DnsError>,
    dmarc_enforced: Option<bool>,
) -> BimiResult {
    let mut findings = Findings::default();
    let mut out = BimiResult {
        assessment: Findings::default().verdict_with(Dimension::Bimi, findings.verdict()),
        record: None,
        declined: false,
        logo: BimiLogo {
            url: None,
            present: false,
            https: false,
            svg: false,
        },
        certificate: BimiCertificate {
            url: None,
            present: false,
            https: false,
        },
    };
    match raw {
        Err(_) => findings.warning(DNS_LOOKUP_FAILED),
        Ok(values) => {
            let refs: Vec<&str> = values.iter().map(String::as_str).collect();
            let lookup = bimi::parse_records(&refs);
            for p in &lookup.problems {
                findings.error(p.code.as_str());
            }
            match lookup.record {
                None if lookup.problems.is_empty() => findings.warning("bimi_record_missing"),
                None => {}
                Some(record) => {
                    out.record = values
                        .iter()
                        .find(|v| v.trim_start().to_ascii_lowercase().starts_with("v=bimi1"))
                        .cloned();
                    out.declined = record.declined;
                    for p in &record.problems {
                        match p.severity {
                            Severity::Error => findings.error(p.code.as_str()),
                            Severity::Warning => findings.warning(p.code.as_str()),
                        }
                    }
                    let logo = record.logo_url.clone().filter(|u| !u.trim().is_empty());
                    let cert = record
                        .certificate_url
                        .clone()
                        .filter(|u| !u.trim().is_empty());
                    out.logo = BimiLogo {
                        present: logo.is_some(),
                        https: logo.as_deref().is_some_and(is_https),
                        svg: logo.as_deref().is_some_and(is_svg),
                        url: record.logo_url,
                    };
                    out.certificate = BimiCertificate {
                        present: cert.is_some(),
                        https: cert.as_deref().is_some_and(is_https),
                        url: record.certificate_url,
                    };
                    if record.declined {
                        findings.warning("bimi_declined");
                    } else if dmarc_enforced == Some(false) {
                        findings.warning("dmarc_not_enforced_for_bimi");
                    }
                }
            }
        }
    }
    let status = findings.verdict();
    out.assessment = findings.verdict_with(Dimension::Bimi, status);
    out
}
