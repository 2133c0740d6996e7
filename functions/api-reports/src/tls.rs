//! A domain's SMTP TLS reports (RFC 8460; SPEC §4.4 TLS-RPT rows).

use axum::extract::{Path, State};
use mailward_api_types::ErrorBody;
use mailward_api_types::tls_reports::{
    ListTlsReportsParams, TlsChart, TlsReportList, TlsReportView, TlsSummary, TlsWindowParams,
};
use mailward_http::extract::{PathId, Query, path_uuid};
use mailward_http::{ApiError, AppState, Principal, Routes};
use mailward_services::reports::tls;

/// The TLS reports of a domain.
#[utoipa::path(get, path = "/domains/{id}/tls-reports", tag = "reports",
    params(("id" = uuid::Uuid, Path, description = "Domain id"), ListTlsReportsParams),
    description = "SMTP TLS reports (RFC 8460) received for the domain, a page at a time. \
Reports arrive only when the domain publishes an MTA-STS policy (or DANE) and a TLS-RPT record \
whose `rua` is the domain's report address. `sort`: day (default; the first UTC day the report \
covers), total_successful, total_failure or organization_name; `order` desc (default) or asc; \
ties newest first. Items carry no failure details: read one report for them.",
    security(("api_key" = []), ("session" = [])),
    responses((status = 200, body = TlsReportList), (status = 400, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn list_tls_reports(
    State(app): State<AppState>,
    principal: Principal,
    PathId(id): PathId,
    Query(params): Query<ListTlsReportsParams>,
) -> Result<axum::Json<TlsReportList>, ApiError> {
    Ok(axum::Json(tls::list(&app, &principal, id, params).await?))
}

/// Daily TLS sessions of a domain.
#[utoipa::path(get, path = "/domains/{id}/tls-reports/chart", tag = "reports",
    params(("id" = uuid::Uuid, Path, description = "Domain id"), TlsWindowParams),
    description = "Successful and failed TLS sessions per UTC day over `period` (last_7_days, \
last_30_days (default), last_90_days or last_365_days; ending yesterday, clamped to the plan's \
retention), as parallel arrays aligned to `labels`. A report covering several days is spread \
evenly over them.",
    security(("api_key" = []), ("session" = [])),
    responses((status = 200, body = TlsChart), (status = 400, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn tls_reports_chart(
    State(app): State<AppState>,
    principal: Principal,
    PathId(id): PathId,
    Query(params): Query<TlsWindowParams>,
) -> Result<axum::Json<TlsChart>, ApiError> {
    Ok(axum::Json(tls::chart(&app, &principal, id, &params).await?))
}

/// TLS sessions of a domain, with failures by result type.
#[utoipa::path(get, path = "/domains/{id}/tls-reports/summary", tag = "reports",
    params(("id" = uuid::Uuid, Path, description = "Domain id"), TlsWindowParams),
    description = "Totals over `period` (as the chart): reports, successful and failed \
sessions, `failure_pct`, failures by RFC 8460 result type (every type of RFC 8460 §4.3 in its \
order, 0 when none, then any other type reported; counted from the failure details kept, the \
100 most frequent per policy of a report) and the reporters, most sessions first.",
    security(("api_key" = []), ("session" = [])),
    responses((status = 200, body = TlsSummary), (status = 400, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn tls_reports_summary(
    State(app): State<AppState>,
    principal: Principal,
    PathId(id): PathId,
    Query(params): Query<TlsWindowParams>,
) -> Result<axum::Json<TlsSummary>, ApiError> {
    Ok(axum::Json(
        tls::summary(&app, &principal, id, &params).await?,
    ))
}

/// One TLS report with its failure details.
#[utoipa::path(get, path = "/domains/{id}/tls-reports/{report_id}", tag = "reports",
    params(("id" = uuid::Uuid, Path, description = "Domain id"),
        ("report_id" = uuid::Uuid, Path, description = "The report's `id` from the list")),
    description = "The report and each policy's results (`policy_type`, `policy_string`, \
`policy_domain`, `mx_host`, totals) with its failure details as RFC 8460 §4.4 defines them, in \
snake_case (`result_type`, `sending_mta_ip`, `receiving_mx_hostname`, `receiving_mx_helo`, \
`receiving_ip`, `failed_session_count`, `additional_information`, `failure_reason_code`): the \
100 most frequent per policy, `failure_details_truncated` true when more were reported.",
    security(("api_key" = []), ("session" = [])),
    responses((status = 200, body = TlsReportView), (status = 400, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn get_tls_report(
    State(app): State<AppState>,
    principal: Principal,
    Path((domain_raw, report_raw)): Path<(String, String)>,
) -> Result<axum::Json<TlsReportView>, ApiError> {
    let id = path_uuid(&domain_raw, "id")?;
    let report = path_uuid(&report_raw, "report_id")?;
    Ok(axum::Json(tls::get(&app, &principal, id, report).await?))
}

/// Routes of this module.
pub fn routes() -> Routes {
    Routes::new()
        .routes(utoipa_axum::routes!(list_tls_reports))
        .routes(utoipa_axum::routes!(tls_reports_chart))
        .routes(utoipa_axum::routes!(tls_reports_summary))
        .routes(utoipa_axum::routes!(get_tls_report))
}
