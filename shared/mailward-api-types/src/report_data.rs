//! SPEC §4.5 report data (field names not shown there; chosen and documented here): the
//! organization's figures over a period, per domain, per sender of a domain, and per day.

use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};
use uuid::Uuid;

/// `period` of the report-data routes.
#[derive(Debug, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ReportDataParams {
    /// last_1_day (yesterday), last_7_days (default), last_30_days or last_365_days; the
    /// window ends yesterday (UTC) and starts no earlier than the plan keeps data.
    #[param(value_type = Option<ReportDataPeriod>, inline)]
    pub period: Option<String>,
}

crate::words!(
    /// `period` of the report-data routes.
    pub ReportDataPeriod = ["last_1_day", "last_7_days", "last_30_days", "last_365_days"]
);

/// Messages of a period and their pass shares.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct VolumeFigures {
    pub volume: u64,
    /// Passed DMARC.
    pub compliant: u64,
    /// Failed DMARC, not forwarded.
    pub failing: u64,
    /// Forwarded: overridden by receivers as forwarded, or failing from a forwarder's network.
    pub forwarded: u64,
    /// Receivers quarantined or rejected.
    pub quarantined: u64,
    pub rejected: u64,
    /// 0-100, two decimals (0 without volume); SPF and DKIM are the aligned results.
    pub dmarc_pass_pct: f64,
    pub spf_pass_pct: f64,
    pub dkim_pass_pct: f64,
}

/// A domain's line in the organization summary.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct DomainVolume {
    pub domain_id: Uuid,
    pub domain: String,
    pub volume: u64,
    pub dmarc_pass_pct: f64,
}

/// `GET /report-data/summary`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ReportDataSummary {
    pub period: String,
    pub date_from: String,
    pub date_to: String,
    /// Domains the caller sees.
    pub domains_total: u64,
    /// Of those, domains with report data in the period.
    pub domains_reporting: u64,
    #[serde(flatten)]
    pub figures: VolumeFigures,
    /// Senders seen in the period across the domains (DomainSources).
    pub senders: u64,
    /// Of those, recognised in the catalogue.
    pub known_senders: u64,
    /// Of those, still waiting for a person's confirmation.
    pub senders_requiring_confirmation: u64,
    /// The ten domains with the most mail, most first.
    pub top_domains: Vec<DomainVolume>,
}

/// A domain's line in `GET /report-data/domains`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct DomainReportData {
    pub domain_id: Uuid,
    pub domain: String,
    /// The domain's score, 0-100.
    pub score: u8,
    /// critical, bad, good or great.
    pub score_band: String,
    /// The published DMARC policy (none, quarantine or reject).
    pub policy: String,
    #[serde(flatten)]
    pub figures: VolumeFigures,
}

/// `GET /report-data/domains`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ReportDataDomains {
    pub period: String,
    pub date_from: String,
    pub date_to: String,
    /// Every domain the caller sees, most mail first (then by name).
    pub domains: Vec<DomainReportData>,
}

/// A sender's line in `GET /report-data/domains/{id}/senders`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct SenderReportData {
    /// The DomainSource id, null for an address no sender lists.
    pub sender_id: Option<Uuid>,
    pub name: String,
    pub sending_domain: Option<String>,
    pub is_known: bool,
    /// confirmed, discarded or requires_confirmation.
    pub confirmation_status: String,
    pub volume: u64,
    /// Share of the domain's volume, 0-100.
    pub share_pct: f64,
    pub dmarc_pass_pct: f64,
    pub spf_pass_pct: f64,
    pub dkim_pass_pct: f64,
    pub forwarded: u64,
    /// Failed DMARC, not forwarded.
    pub failing: u64,
    /// Source IP addresses of the period (at most 50).
    pub source_ips: Vec<String>,
    /// Who owns the sender's addresses (an extension; those its sender keeps).
    pub source_networks: Vec<crate::senders::SourceNetworkView>,
}

/// `GET /report-data/domains/{id}/senders`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ReportDataSenders {
    pub domain_id: Uuid,
    pub domain: String,
    pub period: String,
    pub date_from: String,
    pub date_to: String,
    pub total_volume: u64,
    /// Every sender of the period, most mail first.
    pub senders: Vec<SenderReportData>,
}

/// One day of `GET /report-data/domains/{id}/timeseries`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct VolumePoint {
    /// YYYY-MM-DD (UTC).
    pub date: String,
    pub volume: u64,
    pub compliant: u64,
    pub failing: u64,
    pub forwarded: u64,
    pub spf_aligned_pass: u64,
    pub dkim_aligned_pass: u64,
}

/// `GET /report-data/domains/{id}/timeseries`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ReportDataTimeseries {
    pub domain_id: Uuid,
    pub domain: String,
    pub period: String,
    pub date_from: String,
    pub date_to: String,
    /// One point per day of the window, oldest first, days without reports at 0.
    pub points: Vec<VolumePoint>,
}
