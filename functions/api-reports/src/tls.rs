//! A domain's SMTP TLS reports (RFC 8460; SPEC §4.4 TLS-RPT rows).

use axum::extract::{Path, State};
use axum::http::StatusCode;
use mailward_api_types::ErrorBody;
use mailward_api_types::tls_reports::TlsUploadAccepted;
use mailward_api_types::tls_reports::{
    ListTlsReportsParams, TlsChart, TlsReportList, TlsReportView, TlsSummary, TlsWindowParams,
};
use mailward_http::extract::{PathId, Query, RawBody, path_uuid};
use mailward_http::middleware::ClientIp;
use mailward_http::rate_limit::{RateLimitLog, enforce_logged};
use mailward_http::{ApiError, AppState, Principal, Routes};
use mailward_services::config::Scope;
use mailward_services::reports::{tls, uploads};

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

/// Receives a TLS report over HTTPS.
#[utoipa::path(post, path = "/tlsrpt/{token}", tag = "reports",
    params(("token" = String, Path, description = "The domain's id (32 hex digits, as in its report address)")),
    request_body(description = "One SMTP TLS report (RFC 8460 §4), as JSON or gzip'd JSON",
        content((Object = "application/tlsrpt+json"), (String = "application/tlsrpt+gzip"))),
    description = "An extension beyond SPEC: RFC 8460 §3's HTTPS delivery. A domain's TLS-RPT \
record may name `rua=https://<this API>/tlsrpt/<domain id without hyphens>` beside (or instead \
of) its `mailto:` report address. The token is the same id the report address carries: public, \
an address and not a credential. No authentication; `Content-Type` application/tlsrpt+json or \
application/tlsrpt+gzip (else 415), at most 1 MiB (else 413), 30 uploads a minute per client \
address and per domain (`report_upload` bucket; 429). A body that is not a TLS report is 400 \
`param` body. Accepted uploads answer 202 and are imported within moments as mail to the \
domain's report address would be, attributed to that domain only when its policy domain is the \
domain or below it, and counted as unauthenticated (nothing signs an upload): such a report \
never displaces an authenticated one of the same identity. A token that is not a domain id is \
404; one naming no watched domain is accepted and then imported for nobody.",
    security(()),
    responses((status = 202, body = TlsUploadAccepted), (status = 400, body = ErrorBody),
        (status = 404, body = ErrorBody), (status = 413, body = ErrorBody),
        (status = 415, body = ErrorBody), (status = 429, body = ErrorBody),
        (status = 503, body = ErrorBody)))]
pub async fn upload_tls_report(
    State(app): State<AppState>,
    axum::Extension(ClientIp(ip)): axum::Extension<ClientIp>,
    log: Option<axum::Extension<RateLimitLog>>,
    Path(token): Path<String>,
    body: RawBody,
) -> Result<(StatusCode, axum::Json<TlsUploadAccepted>), ApiError> {
    let Some(domain) = uploads::token_domain(&token) else {
        return Err(mailward_services::error::ServiceError::not_found("report address").into());
    };
    let client = mailward_http::rate_limit::client_subject(&ip);
    enforce_logged(&app, log.as_deref(), Scope::ReportUpload, &client).await?;
    let per_domain = format!("domain:{}", domain.simple());
    enforce_logged(&app, log.as_deref(), Scope::ReportUpload, &per_domain).await?;
    let kind = body.content_type.as_deref().unwrap_or_default();
    if !uploads::CONTENT_TYPES.contains(&kind) {
        return Err(ApiError::new(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "unsupported_media_type",
            "send the TLS report as application/tlsrpt+json or application/tlsrpt+gzip (RFC 8460)",
        ));
    }
    if body.bytes.len() > uploads::MAX_UPLOAD_BYTES {
        return Err(ApiError::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            "payload_too_large",
            "a TLS report upload is at most 1 MiB",
        ));
    }
    let accepted = uploads::accept_tls(&app, &token, Some(kind), body.bytes).await?;
    Ok((StatusCode::ACCEPTED, axum::Json(accepted)))
}

/// Routes of this module.
pub fn routes() -> Routes {
    Routes::new()
        .routes(utoipa_axum::routes!(upload_tls_report))
        .routes(utoipa_axum::routes!(list_tls_reports))
        .routes(utoipa_axum::routes!(tls_reports_chart))
        .routes(utoipa_axum::routes!(tls_reports_summary))
        .routes(utoipa_axum::routes!(get_tls_report))
}
