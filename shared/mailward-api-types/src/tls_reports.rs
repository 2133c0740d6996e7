//! SPEC §4.4 TLS-RPT rows on the wire (their field names are not shown in the SPEC; chosen
//! here): a domain's SMTP TLS reports (RFC 8460), one report with its failure details, a
//! daily chart and a summary by result type.

use crate::PageInfo;
use mailward_domain::tls_reports::TlsPolicyResult;
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};
use uuid::Uuid;

/// `GET /domains/{id}/tls-reports` parameters.
#[derive(Debug, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ListTlsReportsParams {
    /// day (default; the report's first UTC day), total_successful, total_failure or
    /// organization_name.
    #[param(value_type = Option<TlsReportSort>, inline)]
    pub sort: Option<String>,
    /// desc (default) or asc.
    #[param(value_type = Option<crate::common::Order>, inline)]
    pub order: Option<String>,
    /// 1-based page (default 1).
    #[serde(default, deserialize_with = "crate::constraints::present")]
    #[param(minimum = 1, maximum = 1000000)]
    pub page: Option<u32>,
    /// Page size, 1-100 (default 25).
    #[serde(default, deserialize_with = "crate::constraints::present")]
    #[param(minimum = 1, maximum = 100)]
    pub per_page: Option<u32>,
}

crate::words!(
    /// `sort` of the TLS report list.
    pub TlsReportSort = ["day", "total_successful", "total_failure", "organization_name"]
);

/// The window of the chart and the summary.
#[derive(Debug, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct TlsWindowParams {
    /// last_7_days, last_30_days (default), last_90_days or last_365_days; the window ends
    /// yesterday (UTC) and starts no earlier than the plan keeps data.
    #[param(value_type = Option<LongPeriod>, inline)]
    pub period: Option<String>,
}

crate::words!(
    /// `period` of the TLS views and the exports.
    pub LongPeriod = ["last_7_days", "last_30_days", "last_90_days", "last_365_days"]
);

/// A TLS report in a list (without its failure details).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct TlsReportItem {
    pub id: Uuid,
    /// The reporter (`organization-name`).
    pub organization_name: String,
    pub report_id: String,
    pub contact_info: Option<String>,
    /// The report's date range (RFC 3339, UTC).
    pub date_start: String,
    pub date_end: String,
    /// The first UTC day it covers (YYYY-MM-DD).
    pub day: String,
    /// Successful and failed TLS sessions over every policy.
    pub total_successful: u64,
    pub total_failure: u64,
    /// The policy types reported (sts, tlsa, no-policy-found).
    pub policy_types: Vec<String>,
    /// Extension (tenant trust): whether the report's mail passed DKIM aligned with the
    /// reporter's From domain. Anyone can mail a report address, so an unauthenticated report
    /// may be forged; an authenticated report replaces an unauthenticated one of the same
    /// identity. Report files imported by an operator are unauthenticated.
    pub authenticated: bool,
}

/// `GET /domains/{id}/tls-reports`.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct TlsReportList {
    pub data: Vec<TlsReportItem>,
    pub page_info: PageInfo,
}

/// `GET /domains/{id}/tls-reports/{report_id}`: one report with per-failure detail.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct TlsReportView {
    #[serde(flatten)]
    pub report: TlsReportItem,
    /// Each policy's results; `failure_details` keeps the 100 most frequent of a policy
    /// (`failure_details_truncated` says when more were reported).
    pub policies: Vec<TlsPolicyResult>,
}

/// `GET /domains/{id}/tls-reports/chart`: one entry per UTC day of the window.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct TlsChart {
    pub date_from: String,
    pub date_to: String,
    /// Days (YYYY-MM-DD), oldest first.
    pub labels: Vec<String>,
    /// Successful sessions per day, aligned to `labels`.
    pub successful: Vec<u64>,
    /// Failed sessions per day, aligned to `labels`.
    pub failed: Vec<u64>,
}

/// Failed sessions of one RFC 8460 result type.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ResultTypeCount {
    pub result_type: String,
    pub failed_session_count: u64,
}

/// One reporter's sessions in the window.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ReporterCount {
    pub organization_name: String,
    pub reports: u64,
    pub total_successful: u64,
    pub total_failure: u64,
}

/// `GET /domains/{id}/tls-reports/summary`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct TlsSummary {
    pub date_from: String,
    pub date_to: String,
    pub reports: u64,
    pub total_successful: u64,
    pub total_failure: u64,
    /// Failed share of all sessions, 0-100, two decimals (0 without sessions).
    pub failure_pct: f64,
    /// Every RFC 8460 result type in the RFC's order (0 when none), then any other type
    /// reported, from the failure details kept.
    pub failures_by_result_type: Vec<ResultTypeCount>,
    /// Reporters, most sessions first.
    pub reporters: Vec<ReporterCount>,
}

/// `POST /tlsrpt/{token}`: an upload accepted for import (an extension beyond SPEC).
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct TlsUploadAccepted {
    /// `accepted`: imported within moments, then listed in `/domains/{id}/tls-reports`.
    pub status: String,
    /// The report ids read from the upload.
    pub report_ids: Vec<String>,
}
