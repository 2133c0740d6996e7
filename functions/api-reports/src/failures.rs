//! A domain's DMARC failure reports (RFC 9991): an extension beyond SPEC.

use axum::extract::{Path, State};
use mailward_api_types::ErrorBody;
use mailward_api_types::failure_reports::{
    FailureReportList, FailureReportView, ListFailureReportsParams,
};
use mailward_api_types::tools::HeaderAnalysis;
use mailward_http::extract::{PathId, Query, path_uuid};
use mailward_http::{ApiError, AppState, Principal, Routes};
use mailward_services::reports::failures;

/// The failure reports of a domain.
#[utoipa::path(get, path = "/domains/{id}/failure-reports", tag = "reports",
    params(("id" = uuid::Uuid, Path, description = "Domain id"), ListFailureReportsParams),
    description = "An extension beyond SPEC: DMARC failure reports (RFC 9991, formerly RFC 6591 \
ARF) received at the domain's report address, newest first, filtered by `auth_failure` and \
`source_ip`. Each has the ARF fields read (`feedback_type`, `auth_failure`, `reported_domain`, \
`source_ip`, `arrival_date`, `original_mail_from`, `original_rcpt_to`, `dkim_domain`, \
`dkim_selector`, `dkim_identity`, `spf_dns`, `delivery_result`, `identity_alignment`), `arf` \
false for a plain-text report without an ARF part, and `unread`: what could not be read. Only \
the original message's headers are kept, never its body, with the local parts of addresses \
replaced by `redacted` (RFC 6590); lists carry no headers (`original_headers` null). Reports \
are kept 7 days on the free plan and 30 on paid plans, then deleted: they hold personal data.",
    security(("api_key" = []), ("session" = [])),
    responses((status = 200, body = FailureReportList), (status = 400, body = ErrorBody),
        (status = 401, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn list_failure_reports(
    State(app): State<AppState>,
    principal: Principal,
    PathId(id): PathId,
    Query(params): Query<ListFailureReportsParams>,
) -> Result<axum::Json<FailureReportList>, ApiError> {
    Ok(axum::Json(
        failures::list(&app, &principal, id, params).await?,
    ))
}

/// One failure report.
#[utoipa::path(get, path = "/domains/{id}/failure-reports/{report_id}", tag = "reports",
    params(("id" = uuid::Uuid, Path, description = "Domain id"),
        ("report_id" = uuid::Uuid, Path, description = "Failure report id")),
    description = "One failure report with its original headers (redacted) and \
`header_analysis_path`.",
    security(("api_key" = []), ("session" = [])),
    responses((status = 200, body = FailureReportView), (status = 400, body = ErrorBody),
        (status = 401, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn get_failure_report(
    State(app): State<AppState>,
    principal: Principal,
    Path((id, report)): Path<(String, String)>,
) -> Result<axum::Json<FailureReportView>, ApiError> {
    let (id, report) = (path_uuid(&id, "id")?, path_uuid(&report, "report_id")?);
    Ok(axum::Json(
        failures::get(&app, &principal, id, report).await?,
    ))
}

/// The header analysis of a failure report.
#[utoipa::path(get, path = "/domains/{id}/failure-reports/{report_id}/header-analysis", tag = "reports",
    params(("id" = uuid::Uuid, Path, description = "Domain id"),
        ("report_id" = uuid::Uuid, Path, description = "Failure report id")),
    description = "The report's original headers analysed as `POST /tools/header-analyze` does, \
with `include_dns_validation` (DKIM, ARC, SPF and DMARC re-checked live; the answer is \
camelCase). 422 `no_original_headers` when the report carried none. Counts in the `dns` bucket.",
    security(("api_key" = []), ("session" = [])),
    responses((status = 200, body = HeaderAnalysis), (status = 400, body = ErrorBody),
        (status = 401, body = ErrorBody), (status = 404, body = ErrorBody),
        (status = 422, body = ErrorBody), (status = 429, body = ErrorBody)))]
pub async fn failure_report_header_analysis(
    State(app): State<AppState>,
    principal: Principal,
    _quota: mailward_http::dns_quota::DnsQuota,
    Path((id, report)): Path<(String, String)>,
) -> Result<axum::Json<HeaderAnalysis>, ApiError> {
    let (id, report) = (path_uuid(&id, "id")?, path_uuid(&report, "report_id")?);
    Ok(axum::Json(
        failures::header_analysis(&app, &principal, id, report).await?,
    ))
}

/// Routes of this module.
pub fn routes() -> Routes {
    Routes::new()
        .routes(utoipa_axum::routes!(list_failure_reports))
        .routes(utoipa_axum::routes!(get_failure_report))
        .routes(utoipa_axum::routes!(failure_report_header_analysis))
}
