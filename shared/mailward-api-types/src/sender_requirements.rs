//! `GET /domains/{id}/sender-requirements` and `POST /domains/{id}/sender-requirements` (an
//! extension beyond SPEC): mailbox providers' published sender requirements, judged per domain.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use uuid::Uuid;

/// One piece of evidence behind a requirement's status.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct EvidenceView {
    /// Where it comes from: `dns` (live lookup), `reports` (the aggregate reports this provider
    /// sent in the window), `reverse_dns` (forward-confirmed PTR of the addresses in those
    /// reports), `header_analysis` (the organization's most recent header analysis of the
    /// domain's mail, kept 30 days) or `supplied` (a figure the organization supplied).
    pub source: String,
    /// pass, fail or unknown.
    pub status: String,
    /// What it showed, in one sentence.
    pub detail: String,
}

/// One requirement of one provider.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct RequirementView {
    /// spf, dkim, dmarc, reverse_dns, tls, one_click_unsubscribe or spam_rate.
    pub requirement: String,
    /// fail when any evidence fails; pass when every piece passes; otherwise unknown.
    pub status: String,
    /// The requirement and its verdict, in one sentence.
    pub summary: String,
    pub evidence: Vec<EvidenceView>,
    /// The SMTP enhanced status codes the provider rejects or defers such mail with (e.g.
    /// Gmail's `5.7.26`, Outlook.com's `5.7.515`); empty when it publishes none.
    pub error_codes: Vec<String>,
    /// The open `meet_sender_requirement` task about it, when the requirement fails.
    pub task_id: Option<Uuid>,
}

/// One provider's requirements.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ProviderRequirementsView {
    /// gmail, yahoo or outlook.
    pub provider: String,
    /// Gmail, Yahoo or Outlook.com.
    pub name: String,
    /// fail when any requirement fails; pass when all pass; otherwise unknown.
    pub status: String,
    /// Aggregate reports this provider sent for the domain in the window.
    pub reports: u32,
    /// The domain's own messages those reports counted (passing DMARC, or from a sender that
    /// is confirmed, or recognised and not discarded; forwarded mail left out).
    pub messages: u64,
    /// Messages from anyone else (not judged: a stranger's spoofed mail failing is the
    /// policy working).
    pub other_messages: u64,
    pub requirements: Vec<RequirementView>,
}

/// A domain's sender requirements.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct SenderRequirementsView {
    pub domain_id: Uuid,
    pub domain: String,
    /// Days of aggregate reports judged (ending today).
    pub window_days: u32,
    /// When this answer was computed (RFC 3339).
    pub evaluated_at: String,
    /// When the header analysis whose verdicts count ran; null when none in 30 days.
    pub header_analysis_at: Option<String>,
    pub providers: Vec<ProviderRequirementsView>,
}

/// `POST /domains/{id}/sender-requirements`: a spam rate read from a provider's own tools.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SupplySpamRateRequest {
    /// gmail, yahoo or outlook.
    #[schema(value_type = SpamRateProvider)]
    pub provider: Option<String>,
    /// Percent of delivered mail users reported as spam (0 to 100), as Google Postmaster
    /// Tools, Yahoo Sender Hub or Microsoft SNDS shows it. Counts 30 days. Null or absent
    /// clears the provider's rate.
    #[schema(minimum = 0, maximum = 100)]
    pub spam_rate_pct: Option<f64>,
}

crate::words!(
    /// A mailbox provider with published sender requirements.
    pub SpamRateProvider = ["gmail", "yahoo", "outlook"]
);
