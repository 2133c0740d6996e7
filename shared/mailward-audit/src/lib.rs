//! The domain audit engine behind `GET /tools/audit` (SPEC §2.12).
//!
//! [`audit`] inspects one domain's mail authentication through the [`DnsResolver`] port (and the
//! [`PolicyFetcher`] port for the MTA-STS policy) and returns an [`AuditResult`]: one object per
//! dimension (mx, spf, dkim, dmarc, bimi, mtaSts, tlsRpt, and dane beyond SPEC) with `score`, `status`, `info`,
//! `errors`, `warnings` and a `state` object, plus `nameservers`, parked-domain detection and a
//! `summary` with the overall 0-100 score. No HTTP: the service wires the route, the cache, the
//! lead capture and the outbound-safe HTTPS client.
//!
//! Modules: one per dimension ([`mx`], [`spf`], [`dkim`], [`dmarc`], [`bimi`], [`mta_sts`],
//! [`tls_rpt`], [`dane`]), [`verdict`] (verdict rules), [`score`] (weights and deductions, as data),
//! [`parked`] (the parked rule). Each dimension module's docs list its codes.
//!
//! # Failures are never "missing"
//!
//! A SERVFAIL, timeout, REFUSED or spent query budget in a dimension gives the code
//! `dns_lookup_failed` and the verdict `warn` (we chose `warn` over `error` because the rest of
//! the audit is still meaningful and the condition is usually transient; `error` is kept for
//! "the check could not run": DKIM without its catalogue). Such a dimension loses about half its
//! weight (see [`score`]).
//!
//! The whole audit is an `error` (only `summary` present, with `errorCode`) when the domain does
//! not exist (NS answers NXDOMAIN: `domain_not_found`) or when DNS fails everywhere (the NS, MX,
//! SPF and DMARC lookups all failed: `nameservers_unresolvable`).
//!
//! # Concurrency (DESIGN §5, §8)
//!
//! Every dimension starts at once (one `join`), DKIM probes all selectors at once, MX asks all
//! exchanges' addresses at once, MTA-STS fetches the policy while the TXT is asked, DMARC starts
//! its report-authorization walks as soon as the record is read, and SPF's tree is prefetched
//! level by level. All of it goes through a per-audit single-flight memo ([`memo`]) so no
//! `(name, type)` is asked twice. The wall time approaches the longest chain of dependent
//! lookups (`examples/audit_latency.rs` measures it).

pub mod bimi;
pub mod dane;
pub mod dkim;
pub mod dmarc;
pub mod fetch;
mod lookup;
pub mod memo;
pub mod mta_sts;
pub mod mx;
mod ns;
pub mod parked;
pub mod score;
pub mod spf;
pub mod tls_rpt;
pub mod verdict;

pub use bimi::BimiResult;
pub use dane::DaneResult;
pub use dkim::DkimResult;
pub use dmarc::{DmarcResult, MonitoringState, PolicyState};
pub use fetch::{FetchError, PolicyFetcher};
pub use mta_sts::MtaStsResult;
pub use mx::MxResult;
pub use parked::Parking;
pub use score::{DEDUCTIONS, Deduction, Dimension, WEIGHTS, Weight};
pub use spf::SpfResult;
pub use tls_rpt::TlsRptResult;
pub use verdict::{Assessment, DimensionState, Verdict};

use futures::future::{join, join4};
use mailward_domain::dns::DnsResolver;
use memo::Memo;
use ns::NsOutcome;
use serde::{Deserialize, Serialize};

/// What to audit. Why a struct: the route has several optional inputs and the lead adds more.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AuditInput {
    /// The domain, already normalised (lower case, punycode, no trailing dot).
    pub domain: String,
    /// The caller's email, echoed in the summary (lead capture is the route's job).
    pub email: Option<String>,
    /// DKIM selectors from the sending-source catalogue; `None` when the catalogue was
    /// unavailable (the DKIM verdict is then `error`).
    pub dkim_selectors: Option<Vec<String>>,
    /// Extra selectors supplied by the caller.
    pub extra_selectors: Vec<String>,
    /// The service's hosted DMARC zone: a `_dmarc` CNAME into it sets `isHosted`.
    pub hosted_dmarc_suffix: Option<String>,
}

/// success or error.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub enum AuditStatus {
    /// The audit ran.
    Success,
    /// The audit could not run; only the summary is present.
    Error,
}

/// The summary line (SPEC §2.12).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "openapi", schema(as = AuditSummary))]
#[serde(rename_all = "camelCase")]
pub struct Summary {
    /// The audited domain.
    pub domain: String,
    /// The echoed email.
    pub email: Option<String>,
    /// Parked-domain flag.
    pub parked: bool,
    /// Overall score 0-100.
    pub score: u8,
    /// Verdict of mx.
    pub mx: Verdict,
    /// Verdict of spf.
    pub spf: Verdict,
    /// Verdict of dkim.
    pub dkim: Verdict,
    /// Verdict of dmarc.
    pub dmarc: Verdict,
    /// Verdict of bimi.
    pub bimi: Verdict,
    /// Verdict of mtaSts.
    pub mta_sts: Verdict,
    /// Verdict of tlsRpt.
    pub tls_rpt: Verdict,
    /// Why the audit could not run: `domain_not_found` or `nameservers_unresolvable`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(nullable = false))]
    pub error_code: Option<String>,
}

/// The audit result. On `error` only `status` and `summary` are serialized.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct AuditResult {
    /// success or error.
    pub status: AuditStatus,
    /// The summary.
    pub summary: Summary,
    /// NS hosts (empty when NODATA or when the lookup failed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(nullable = false))]
    pub nameservers: Option<Vec<String>>,
    /// ok, no_data or dns_lookup_failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(nullable = false))]
    pub nameservers_status: Option<String>,
    /// Parked detection and why.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(nullable = false))]
    pub parking: Option<Parking>,
    /// MX.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(nullable = false))]
    pub mx: Option<MxResult>,
    /// SPF.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(nullable = false))]
    pub spf: Option<SpfResult>,
    /// DKIM.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(nullable = false))]
    pub dkim: Option<DkimResult>,
    /// DMARC.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(nullable = false))]
    pub dmarc: Option<DmarcResult>,
    /// BIMI.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(nullable = false))]
    pub bimi: Option<BimiResult>,
    /// MTA-STS.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(nullable = false))]
    pub mta_sts: Option<MtaStsResult>,
    /// TLS-RPT.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(nullable = false))]
    pub tls_rpt: Option<TlsRptResult>,
    /// DANE for SMTP (an extension beyond SPEC §2.12, informational: never scored).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(nullable = false))]
    pub dane: Option<DaneResult>,
}

impl AuditResult {
    /// Whether a DNS lookup failed anywhere in the audit (a dimension's record is unknown, not
    /// missing): its score then counts a guess for that dimension, not an observation.
    pub fn lookups_failed(&self) -> bool {
        fn failed(a: &verdict::Assessment) -> bool {
            a.errors
                .iter()
                .chain(&a.warnings)
                .chain(&a.info)
                .any(|code| code.ends_with("lookup_failed"))
        }
        self.nameservers_status.as_deref() == Some(verdict::DNS_LOOKUP_FAILED)
            || self.mx.as_ref().is_some_and(|r| failed(&r.assessment))
            || self.spf.as_ref().is_some_and(|r| failed(&r.assessment))
            || self.dkim.as_ref().is_some_and(|r| failed(&r.assessment))
            || self.dmarc.as_ref().is_some_and(|r| failed(&r.assessment))
            || self.bimi.as_ref().is_some_and(|r| failed(&r.assessment))
            || self.mta_sts.as_ref().is_some_and(|r| failed(&r.assessment))
            || self.tls_rpt.as_ref().is_some_and(|r| failed(&r.assessment))
    }
}

fn error_result(input: &AuditInput, code: &str) -> AuditResult {
    AuditResult {
        status: AuditStatus::Error,
        summary: Summary {
            domain: input.domain.clone(),
            email: input.email.clone(),
            parked: false,
            score: 0,
            mx: Verdict::Error,
            spf: Verdict::Error,
            dkim: Verdict::Error,
            dmarc: Verdict::Error,
            bimi: Verdict::Error,
            mta_sts: Verdict::Error,
            tls_rpt: Verdict::Error,
            error_code: Some(code.to_string()),
        },
        nameservers: None,
        nameservers_status: None,
        parking: None,
        mx: None,
        spf: None,
        dkim: None,
        dmarc: None,
        bimi: None,
        mta_sts: None,
        tls_rpt: None,
        dane: None,
    }
}

/// The exchanges of the MX answer (null MX left out); `None` when the lookup failed.
fn mx_exchanges(raw: &mx::MxRaw) -> Option<Vec<String>> {
    raw.records().map(|records| {
        records
            .into_iter()
            .filter(|h| !h.is_root())
            .map(|h| h.exchange)
            .collect()
    })
}

/// Audits `input.domain`. Never panics; DNS failures become codes (see the crate docs).
pub async fn audit(
    resolver: &dyn DnsResolver,
    fetcher: &dyn PolicyFetcher,
    input: &AuditInput,
) -> AuditResult {
    let domain = input
        .domain
        .trim()
        .trim_end_matches('.')
        .to_ascii_lowercase();
    if domain.is_empty() {
        return error_result(input, "domain_not_found");
    }
    let memo = Memo::new(resolver);
    let r: &dyn DnsResolver = &memo;
    let selectors =
        dkim::selectors_to_probe(input.dkim_selectors.as_deref(), &input.extra_selectors);
    let d = domain.as_str();
    // DANE reads the MX hosts' TLSA records as soon as the MX answer is in.
    let mx_then_dane = async {
        let raw = mx::gather(r, d).await;
        let hosts = mx_exchanges(&raw).unwrap_or_default();
        let dane = dane::gather(r, d, &hosts).await;
        (raw, dane)
    };
    let ((ns, (mx_raw, dane_raw), spf_audit, dkim_raw), (dmarc_raw, bimi_raw, sts_raw, tls_raw)) =
        join(
            join4(
                ns::gather(r, d),
                mx_then_dane,
                spf::gather(r, d),
                dkim::gather(r, d, &selectors, &input.extra_selectors),
            ),
            join4(
                dmarc::gather(r, d),
                bimi::gather(r, d),
                mta_sts::gather(r, fetcher, d),
                tls_rpt::gather(r, d),
            ),
        )
        .await;

    if ns == NsOutcome::NoSuchDomain {
        return error_result(input, "domain_not_found");
    }
    let mx_failed = mx_raw.records().is_none();
    if ns == NsOutcome::Failed
        && mx_failed
        && spf::lookup_failed(&spf_audit)
        && dmarc_raw.record.status == mailward_dmarc::DiscoveryStatus::LookupFailed
    {
        return error_result(input, "nameservers_unresolvable");
    }
    let (nameservers, nameservers_status) = match ns {
        NsOutcome::Hosts(h) if h.is_empty() => (h, "no_data"),
        NsOutcome::Hosts(h) => (h, "ok"),
        _ => (Vec::new(), verdict::DNS_LOOKUP_FAILED),
    };

    let mx = mx::assess(&mx_raw);
    let spf = spf::assess(&spf_audit);
    let dkim = dkim::assess(&dkim_raw, input.dkim_selectors.is_some());
    let dmarc = dmarc::assess(&dmarc_raw, input.hosted_dmarc_suffix.as_deref());
    let bimi = bimi::assess(&bimi_raw, dmarc::enforced(&dmarc));
    let mx_hosts = mx_exchanges(&mx_raw);
    let mta_sts = mta_sts::assess(&sts_raw, mx_hosts.as_deref());
    let tls_rpt = tls_rpt::assess(&tls_raw);
    let dane = dane::assess(&dane_raw);

    let spf_record: Option<Option<&str>> = if spf::has_no_record(&spf_audit) {
        Some(None)
    } else if spf_audit.records.len() == 1 {
        Some(spf_audit.record.as_deref())
    } else {
        None
    };
    let parking = parked::detect(parked::ParkingInput {
        nameservers: &nameservers,
        no_mail_exchangers: mx_raw
            .records()
            .map(|records| records.iter().all(|h| h.is_root())),
        spf_record,
    });
    let score = score::overall_score(
        &[
            (Dimension::Mx, mx.assessment.score),
            (Dimension::Spf, spf.assessment.score),
            (Dimension::Dkim, dkim.assessment.score),
            (Dimension::Dmarc, dmarc.assessment.score),
            (Dimension::Bimi, bimi.assessment.score),
        ],
        parking.parked,
    );
    AuditResult {
        status: AuditStatus::Success,
        summary: Summary {
            domain: domain.clone(),
            email: input.email.clone(),
            parked: parking.parked,
            score,
            mx: mx.assessment.status,
            spf: spf.assessment.status,
            dkim: dkim.assessment.status,
            dmarc: dmarc.assessment.status,
            bimi: bimi.assessment.status,
            mta_sts: mta_sts.assessment.status,
            tls_rpt: tls_rpt.assessment.status,
            error_code: None,
        },
        nameservers: Some(nameservers),
        nameservers_status: Some(nameservers_status.to_string()),
        parking: Some(parking),
        mx: Some(mx),
        spf: Some(spf),
        dkim: Some(dkim),
        dmarc: Some(dmarc),
        bimi: Some(bimi),
        mta_sts: Some(mta_sts),
        tls_rpt: Some(tls_rpt),
        dane: Some(dane),
    }
}
