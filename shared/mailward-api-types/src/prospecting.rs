//! Prospecting reports (SPEC §2.12, §4.6): an audit of up to ten domains from live DNS, written
//! for the person a managed-service provider wants to convince, as data, as an HTML document and
//! as a PDF behind a public 90-day link.
//!
//! One content model ([`ProspectingReportContent`]) feeds all three renderings, so the PDF says
//! exactly what the HTML says.

use crate::common::PageInfo;
use serde::{Deserialize, Serialize};
use time::OffsetDateTime;
use utoipa::ToSchema;
use uuid::Uuid;

/// The language the report is written in.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum Language {
    #[default]
    En,
    Fr,
}

/// The colour scheme of the HTML and PDF renderings.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum Theme {
    #[default]
    Light,
    Dark,
}

/// The currency of the potential-loss block.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub enum Currency {
    #[default]
    USD,
    CAD,
    EUR,
    GBP,
    AUD,
}

/// What `POST /prospecting-reports/preview` answers.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum PreviewFormat {
    /// The report as data ([`ProspectingReportContent`]).
    #[default]
    Json,
    /// A self-contained HTML document (inline styles, no external resources).
    Html,
}

fn yes() -> bool {
    true
}

fn six() -> u8 {
    6
}

/// Declares a request struct with the report options, so the creation and preview bodies list
/// them once.
macro_rules! report_options {
    ($(#[$meta:meta])* $name:ident { $($extra:tt)* }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Deserialize, ToSchema)]
        #[serde(deny_unknown_fields)]
        pub struct $name {
            /// Who the report is prepared for (a company or person), 1 to 200 characters
            /// without control characters (surrounding spaces are trimmed).
            #[schema(value_type = GeneratedFor)]
            pub generated_for: String,
            /// 1 to 10 domain names of at most 253 characters, audited from live DNS; they need
            /// not be in the account. Duplicates count once; names that are not valid domains
            /// are listed as skipped.
            #[schema(min_items = 1, max_items = 10, max_length = 253)]
            pub domains: Vec<String>,
            #[serde(default)]
            pub language: Language,
            /// Whether the cover names the organization that prepared the report.
            #[serde(default = "yes")]
            pub include_organization_info: bool,
            /// Whether BIMI is assessed and shown.
            #[serde(default = "yes")]
            pub include_bimi: bool,
            /// Whether each domain's published records are listed.
            #[serde(default)]
            pub include_dns_records: bool,
            /// Whether the potential-loss estimate is included.
            #[serde(default = "yes")]
            pub include_potential_loss: bool,
            #[serde(default)]
            pub theme: Theme,
            #[serde(default)]
            pub currency: Currency,
            /// Weeks until the recommended completion date, 1 to 52.
            #[serde(default = "six")]
            #[schema(minimum = 1, maximum = 52)]
            pub deadline_weeks: u8,
            $($extra)*
        }
    };
}

crate::schema_type!(
    /// Who a prospecting report is for: 1 to 200 characters without control characters,
    /// surrounding spaces trimmed.
    pub GeneratedFor = crate::constraints::text(1, 200)
);

report_options!(
    /// `POST /prospecting-reports` body.
    CreateProspectingReport {}
);

report_options!(
    /// `POST /prospecting-reports/preview` body: the creation body plus `format`.
    PreviewProspectingReport {
        /// json (default) or html.
        #[serde(default)]
        pub format: PreviewFormat,
    }
);

impl PreviewProspectingReport {
    /// The report options without the format.
    pub fn into_parts(self) -> (CreateProspectingReport, PreviewFormat) {
        (
            CreateProspectingReport {
                generated_for: self.generated_for,
                domains: self.domains,
                language: self.language,
                include_organization_info: self.include_organization_info,
                include_bimi: self.include_bimi,
                include_dns_records: self.include_dns_records,
                include_potential_loss: self.include_potential_loss,
                theme: self.theme,
                currency: self.currency,
                deadline_weeks: self.deadline_weeks,
            },
            self.format,
        )
    }
}

/// A finding's verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum FindingStatus {
    Pass,
    Warn,
    Fail,
    /// The check could not complete (a DNS lookup failed).
    Error,
}

/// How exposed a domain is to impersonation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum RiskLevel {
    Low,
    Moderate,
    High,
    Critical,
}

/// Whether an authorised sending service signs the domain's mail with DKIM.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum DkimState {
    /// A key at one of the service's known selectors was found in DNS.
    Signed,
    /// The service's known selectors were probed and none holds a key.
    Missing,
    /// The service has no known selector, or the probe could not run.
    Unknown,
}

/// The cover page.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct ReportCover {
    /// The report title, in the report's language.
    pub title: String,
    /// One sentence on what the report is.
    pub subtitle: String,
    /// Who the report is prepared for.
    pub generated_for: String,
    /// The organization that prepared it; null when `include_organization_info` is false.
    pub prepared_by: Option<String>,
    /// The audit date (YYYY-MM-DD, UTC).
    pub date: String,
    /// The recommended completion date: the audit date plus `deadline_weeks` (YYYY-MM-DD).
    pub deadline: String,
    /// The average score of the audited domains, 0 to 100 (0 when none could be audited).
    pub average_score: u8,
    /// The highest risk among the audited domains (null when none could be audited).
    pub overall_risk: Option<RiskLevel>,
    /// The overall risk in words, in the report's language.
    pub overall_risk_word: Option<String>,
    /// A one-paragraph summary for a non-technical reader.
    pub summary: String,
}

/// One check of one domain.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct Finding {
    /// mx, spf, dkim, dmarc, bimi, mta_sts, tls_rpt or dane (DANE for SMTP, RFC 7672: shown when published, or when MTA-STS does not enforce encryption; an extension).
    pub dimension: String,
    pub status: FindingStatus,
    /// One line in the report's language.
    pub title: String,
    /// What it means and what to do, in the report's language.
    pub detail: String,
    /// The audit codes behind the finding (the same codes as GET /tools/audit).
    pub codes: Vec<String>,
}

/// One DNS record as published.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct ReportDnsRecord {
    /// MX, TXT, CNAME or TLSA (DANE, `3 1 1 <hex>`).
    #[serde(rename = "type")]
    pub record_type: String,
    /// The owner name.
    pub name: String,
    pub value: String,
}

/// A sending service the domain's SPF record authorises.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct SendingService {
    /// The service's name from the sending-source catalogue, or the include host when the
    /// catalogue does not know it.
    pub name: String,
    /// The catalogue's source id (null when unknown).
    pub source_id: Option<Uuid>,
    /// The SPF include that authorises it.
    pub spf_include: String,
    pub dkim: DkimState,
}

/// One audited domain.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct DomainResult {
    pub domain: String,
    /// The audit score, 0 to 100.
    pub score: u8,
    /// Whether the domain looks parked (no mail): only SPF and DMARC are judged.
    pub parked: bool,
    pub risk: RiskLevel,
    /// The risk in words, in the report's language.
    pub risk_word: String,
    /// One finding per checked dimension, most severe first.
    pub findings: Vec<Finding>,
    /// The published records; null unless `include_dns_records` is true.
    pub dns_records: Option<Vec<ReportDnsRecord>>,
    /// The services the SPF record authorises, with their DKIM state.
    pub sending_services: Vec<SendingService>,
}

/// A domain left out of the report.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct SkippedDomain {
    /// The name as given.
    pub domain: String,
    /// invalid_domain, duplicate, domain_not_found or nameservers_unresolvable.
    pub reason: String,
    /// The reason in the report's language.
    pub message: String,
}

/// The potential-loss estimate for one domain.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct DomainExposure {
    pub domain: String,
    /// The estimated yearly exposure, in whole units of `currency`.
    pub amount: u64,
}

/// The potential-loss block: an illustrative yearly exposure to impersonation fraud.
///
/// Model: each domain's exposure is a reference incident cost (USD 50,000; CAD 68,000;
/// EUR 46,000; GBP 40,000; AUD 76,000) times the share of protection it lacks
/// ((100 - score) / 100), rounded to the nearest hundred; parked domains count one fifth.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct PotentialLoss {
    pub currency: Currency,
    /// The sum over the audited domains.
    pub total: u64,
    pub domains: Vec<DomainExposure>,
    /// The reference incident cost used, in `currency`.
    pub reference_incident_cost: u64,
    /// The model in one paragraph, in the report's language.
    pub explanation: String,
}

/// One step of the recommended plan. Named `ProspectingPlanStep` in the document: the
/// domain plan has a `PlanStep` of its own (the two shared one schema name, and the report's
/// steps were checked against the other's fields).
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[schema(as = ProspectingPlanStep)]
pub struct PlanStep {
    /// The week (1-based) by which the step should be done.
    pub week: u8,
    pub title: String,
}

/// The report as data: what the HTML and the PDF show.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct ProspectingReportContent {
    pub language: Language,
    pub theme: Theme,
    pub deadline_weeks: u8,
    pub cover: ReportCover,
    /// The audited domains in the order given.
    pub domains: Vec<DomainResult>,
    /// The risk words used, from lowest to highest, in the report's language.
    pub risk_words: Vec<String>,
    /// Null when `include_potential_loss` is false.
    pub potential_loss: Option<PotentialLoss>,
    /// The recommended steps, timed to finish by the deadline.
    pub plan: Vec<PlanStep>,
    /// Domains whose nameservers returned nothing usable, and names that are not domains.
    pub skipped_domains: Vec<SkippedDomain>,
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    pub generated_at: OffsetDateTime,
}

/// A stored prospecting report.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct ProspectingReport {
    pub id: Uuid,
    pub generated_for: String,
    /// The domains as requested.
    pub domains: Vec<String>,
    pub language: Language,
    pub theme: Theme,
    pub currency: Currency,
    pub deadline_weeks: u8,
    pub include_organization_info: bool,
    pub include_bimi: bool,
    pub include_dns_records: bool,
    pub include_potential_loss: bool,
    /// The public PDF link: anyone with it can open the report until `expires_at`.
    pub url: String,
    /// The account that created it (null when created with an API key).
    pub created_by: Option<Uuid>,
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    pub created_at: OffsetDateTime,
    /// 90 days after creation; the link then answers 410.
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    pub expires_at: OffsetDateTime,
    /// The report's content (on creation and on the single read; absent from lists).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub report: Option<ProspectingReportContent>,
}

/// `GET /prospecting-reports` answer.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct ProspectingReportList {
    pub data: Vec<ProspectingReport>,
    pub page_info: PageInfo,
}
