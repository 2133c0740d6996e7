//! The TLS-RPT dimension: the record at `_smtp._tls.<domain>` (`mailward_records::tls_rpt`) and
//! its `rua`. Optional and never scored: absence is the verdict `info`.
//!
//! | code | category | meaning |
//! |---|---|---|
//! | `tls_rpt_not_configured` | info | no record (verdict `info`) |
//! | `dns_lookup_failed` | warning | the lookup failed: unknown, not missing |
//! | every `mailward_records::tls_rpt` code | error | e.g. `missing_rua`, `invalid_rua_uri`, `multiple_records` |

use crate::lookup::txt;
use crate::score::Dimension;
use crate::verdict::{Assessment, DNS_LOOKUP_FAILED, Findings, Verdict};
use mailward_domain::dns::{DnsError, DnsResolver};
use mailward_records::tls_rpt;
use mailward_records::{ProblemCode, Severity};
use serde::{Deserialize, Serialize};

/// The `tlsRpt` object of the audit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct TlsRptResult {
    /// Score (always 0), verdict, codes and state.
    #[serde(flatten)]
    pub assessment: Assessment,
    /// The record.
    pub record: Option<String>,
    /// Its `rua` entries.
    pub rua: Vec<String>,
}

/// The TXT values at `_smtp._tls.<domain>`.
pub(crate) async fn gather(
    resolver: &dyn DnsResolver,
    domain: &str,
) -> Result<Vec<String>, DnsError> {
    txt(resolver, &format!("_smtp._tls.{domain}")).await
}

/// Builds the `tlsRpt` object.
pub(crate) fn assess(raw: &Result<Vec<String>, DnsError>) -> TlsRptResult {
    let mut findings = Findings::default();
    let mut record = None;
    let mut rua = Vec::new();
    let mut absent = false;
    match raw {
        Err(_) => findings.warning(DNS_LOOKUP_FAILED),
        Ok(values) => {
            let refs: Vec<&str> = values.iter().map(String::as_str).collect();
            let lookup = tls_rpt::parse_records(&refs);
            for p in &lookup.problems {
                findings.error(p.code.as_str());
            }
            match lookup.record {
                Some(r) => {
                    record = values
                        .iter()
                        .find(|v| v.trim_start().starts_with("v=TLSRPTv1"))
                        .cloned();
                    for p in &r.problems {
                        match p.severity {
                            Severity::Error => findings.error(p.code.as_str()),
                            Severity::Warning => findings.warning(p.code.as_str()),
                        }
                    }
                    rua = r.rua;
                }
                None if lookup.problems.is_empty() => {
                    absent = true;
                    findings.info("tls_rpt_not_configured");
                }
                None => {}
            }
        }
    }
    let status = if absent {
        Verdict::Info
    } else {
        findings.verdict()
    };
    TlsRptResult {
        assessment: findings.verdict_with(Dimension::TlsRpt, status),
        record,
        rua,
    }
}
