//! The MTA-STS dimension: the TXT record at `_mta-sts.<domain>` and the policy fetched through
//! [`PolicyFetcher`] (both started at once: the fetch does not wait for the TXT answer), parsed
//! with `mailward_records::mta_sts`; the policy's `mx` patterns are checked against the real MX
//! hosts (`check_mx_coverage`, skipped for mode `none` or when the MX lookup failed). Optional
//! and never scored.
//!
//! Verdicts: `info` when no TXT record; `fail` on any error; `in progress` in `testing` mode;
//! `warn` on warnings (including mode `none` and a failed TXT lookup); else `pass`.
//!
//! | code | category | meaning |
//! |---|---|---|
//! | `mta_sts_not_configured` | info | no `v=STSv1` record (verdict `info`) |
//! | `policy_without_record` | info | a policy is served but no TXT record announces it |
//! | `mode_testing` | info | testing mode (verdict `in progress`) |
//! | `mode_none` | warning | mode `none`: the policy is being withdrawn |
//! | `policy_not_found` | error | [`FetchError::NotFound`] |
//! | `policy_http_error` | error | [`FetchError::Http`] |
//! | `policy_fetch_timeout` | error | [`FetchError::Timeout`] |
//! | `policy_tls_error` | error | [`FetchError::Tls`] |
//! | `policy_connection_refused` | error | [`FetchError::Refused`] |
//! | `policy_too_large` | error | [`FetchError::TooLarge`] |
//! | `policy_fetch_failed` | error | [`FetchError::Other`] |
//! | `dns_lookup_failed` | warning | the TXT lookup failed: unknown, not missing |
//! | every `mailward_records::mta_sts` code | its severity | e.g. `missing_id`, `invalid_mode`, `mx_not_covered` (error), `max_age_short` (warning) |

use crate::fetch::{FetchError, PolicyFetcher};
use crate::lookup::txt;
use crate::score::Dimension;
use crate::verdict::{Assessment, DNS_LOOKUP_FAILED, Findings, Verdict};
use mailward_domain::dns::{DnsError, DnsResolver};
use mailward_records::mta_sts::{self, Mode};
use mailward_records::{Problem, ProblemCode, Severity};
use serde::{Deserialize, Serialize};

/// The parsed policy.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct StsPolicyView {
    /// enforce, testing or none.
    pub mode: Option<String>,
    /// The `mx` patterns.
    pub mx: Vec<String>,
    /// `max_age` in seconds.
    pub max_age: Option<u64>,
}

/// The `mtaSts` object of the audit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct MtaStsResult {
    /// Score (always 0), verdict, codes and state.
    #[serde(flatten)]
    pub assessment: Assessment,
    /// The TXT record.
    pub record: Option<String>,
    /// Its `id`.
    pub id: Option<String>,
    /// The policy, when fetched.
    pub policy: Option<StsPolicyView>,
    /// Why the fetch failed.
    pub fetch_error: Option<FetchError>,
    /// MX hosts no pattern covers.
    pub uncovered_hosts: Vec<String>,
    /// Patterns matching no MX host.
    pub unused_patterns: Vec<String>,
}

/// Raw results: the TXT values and the fetch.
#[derive(Debug, Clone)]
pub(crate) struct StsRaw {
    pub(crate) txt: Result<Vec<String>, DnsError>,
    pub(crate) fetch: Result<String, FetchError>,
}

/// TXT lookup and policy fetch, concurrently.
pub(crate) async fn gather(
    resolver: &dyn DnsResolver,
    fetcher: &dyn PolicyFetcher,
    domain: &str,
) -> StsRaw {
    let name = format!("_mta-sts.{domain}");
    let (txt, fetch) =
        futures::future::join(txt(resolver, &name), fetcher.fetch_mta_sts_policy(domain)).await;
    StsRaw { txt, fetch }
}

fn fetch_code(e: &FetchError) -> &'static str {
    match e {
        FetchError::NotFound => "policy_not_found",
        FetchError::Http(_) => "policy_http_error",
        FetchError::Timeout => "policy_fetch_timeout",
        FetchError::Tls => "policy_tls_error",
        FetchError::Refused => "policy_connection_refused",
        FetchError::TooLarge => "policy_too_large",
        FetchError::Other(_) => "policy_fetch_failed",
    }
}

fn add<C: ProblemCode>(findings: &mut Findings, problems: &[Problem<C>]) {
    for p in problems {
        match p.severity {
            Severity::Error => findings.error(p.code.as_str()),
            Severity::Warning => findings.warning(p.code.as_str()),
        }
    }
}

/// Builds the `mtaSts` object; `mx_hosts` are the real MX exchanges (None when unknown).
pub(crate) fn assess(raw: &StsRaw, mx_hosts: Option<&[String]>) -> MtaStsResult {
    let mut findings = Findings::default();
    let mut out = MtaStsResult {
        assessment: Findings::default().verdict_with(Dimension::MtaSts, Verdict::Pass),
        record: None,
        id: None,
        policy: None,
        fetch_error: raw.fetch.as_ref().err().cloned(),
        uncovered_hosts: Vec::new(),
        unused_patterns: Vec::new(),
    };
    let mut has_record = false;
    match &raw.txt {
        Err(_) => findings.warning(DNS_LOOKUP_FAILED),
        Ok(values) => {
            let refs: Vec<&str> = values.iter().map(String::as_str).collect();
            let lookup = mta_sts::parse_txt_records(&refs);
            add(&mut findings, &lookup.problems);
            has_record = !lookup.problems.is_empty() || lookup.record.is_some();
            if let Some(r) = lookup.record {
                out.record = values
                    .iter()
                    .find(|v| v.trim_start().starts_with("v=STSv1"))
                    .cloned();
                out.id = r.id.clone();
                add(&mut findings, &r.problems);
            }
        }
    }
    let policy = raw
        .fetch
        .as_ref()
        .ok()
        .map(|body| mta_sts::parse_policy(body));
    if let Some(p) = &policy {
        out.policy = Some(StsPolicyView {
            mode: p.mode.map(|m| m.as_str().to_string()),
            mx: p.mx.clone(),
            max_age: p.max_age,
        });
    }
    let absent = raw.txt.as_ref().is_ok() && !has_record;
    if absent {
        findings.info("mta_sts_not_configured");
        if policy.as_ref().is_some_and(|p| p.is_valid()) {
            findings.info("policy_without_record");
        }
        out.fetch_error = None;
        let status = Verdict::Info;
        out.assessment = findings.verdict_with(Dimension::MtaSts, status);
        return out;
    }
    let mut testing = false;
    match (&raw.fetch, &policy) {
        (Err(e), _) => findings.error(fetch_code(e)),
        (Ok(_), Some(p)) => {
            add(&mut findings, &p.problems);
            match p.mode {
                Some(Mode::Testing) => {
                    testing = true;
                    findings.info("mode_testing");
                }
                Some(Mode::None) => findings.warning("mode_none"),
                _ => {}
            }
            if let (Some(hosts), Some(Mode::Enforce | Mode::Testing)) = (mx_hosts, p.mode)
                && !hosts.is_empty()
            {
                let coverage = mta_sts::check_mx_coverage(&p.mx, hosts);
                add(&mut findings, &coverage.problems);
                out.uncovered_hosts = coverage.uncovered_hosts;
                out.unused_patterns = coverage.unused_patterns;
            }
        }
        (Ok(_), None) => {}
    }
    let status = if !findings.errors.is_empty() {
        Verdict::Fail
    } else if testing {
        Verdict::InProgress
    } else {
        findings.verdict()
    };
    out.assessment = findings.verdict_with(Dimension::MtaSts, status);
    out
}
