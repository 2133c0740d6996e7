//! A domain's DMARC failure reports (RFC 9991) on the wire: an extension beyond SPEC.

use crate::PageInfo;
use mailward_domain::failure_reports::FailureReport;
use serde::{Deserialize, Serialize};
use time::OffsetDateTime;
use utoipa::{IntoParams, ToSchema};
use uuid::Uuid;

/// `GET /domains/{id}/failure-reports` parameters.
#[derive(Debug, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ListFailureReportsParams {
    /// Only reports of this `Auth-Failure` (dmarc, dkim, spf, bodyhash, revoked, signature).
    pub auth_failure: Option<String>,
    /// Only reports of this `Source-IP`.
    pub source_ip: Option<String>,
    /// 1-based page (default 1).
    #[serde(default, deserialize_with = "crate::constraints::present")]
    #[param(minimum = 1, maximum = 1000000)]
    pub page: Option<u32>,
    /// Page size, 1-100 (default 25).
    #[serde(default, deserialize_with = "crate::constraints::present")]
    #[param(minimum = 1, maximum = 100)]
    pub per_page: Option<u32>,
}

/// One failure report: the ARF fields read, the original headers (in lists: null; read the
/// report for them), and where to analyse them.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct FailureReportView {
    pub id: Uuid,
    /// When Mailward received it.
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    pub received_at: OffsetDateTime,
    /// Whether its mail passed DKIM aligned with the reporter's From domain.
    pub authenticated: bool,
    /// Whether the local parts of addresses were replaced by `redacted` (RFC 6590).
    pub redacted: bool,
    #[serde(flatten)]
    pub report: FailureReport,
    /// `GET` this path for the header analysis of its original headers (as
    /// `POST /tools/header-analyze` answers it).
    pub header_analysis_path: String,
    /// The sender (`GET /domains/{id}/sources`) whose addresses include `source_ip`, once
    /// identification has seen it in aggregate reports; null otherwise.
    pub sender_id: Option<Uuid>,
}

/// A page of failure reports, newest first.
#[derive(Debug, Serialize, ToSchema)]
pub struct FailureReportList {
    pub data: Vec<FailureReportView>,
    pub page_info: PageInfo,
}
