//! Prospecting reports (SPEC §4.6): previews, stored reports and their deletion. The public PDF
//! download belongs to the `api-report-pdf` function, the only one that links the PDF engine.

use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use mailward_api_types::prospecting::{
    CreateProspectingReport, PreviewProspectingReport, ProspectingReport, ProspectingReportContent,
    ProspectingReportList,
};
use mailward_api_types::{ErrorBody, PageParams, RateLimitBody};
use mailward_http::dns_quota::DnsQuota;
use mailward_http::extract::{Json, PathId, Query};
use mailward_http::{ApiError, AppState, Principal, Routes};
use mailward_services::prospecting::{self, Preview};

/// Previews a report without storing it.
#[utoipa::path(post, path = "/prospecting-reports/preview", tag = "prospecting-reports",
    request_body = PreviewProspectingReport,
    description = "Any member or key. Audits the domains from live DNS (through the ten-minute \
audit cache; the `dns` rate-limit buckets apply) and answers the report as data (`format` json, \
the default) or as one self-contained HTML document (`format` html: inline styles, no scripts, no \
external resources). Nothing is stored and no link is created. `generated_for` 1-200 characters; \
`domains` 1-10 names (names that are not domains, duplicates, domains that do not exist and \
domains whose nameservers answer nothing usable are listed in `skipped_domains`, not refused); \
`language` en|fr; `theme` light|dark; `currency` USD|CAD|EUR|GBP|AUD; `deadline_weeks` 1-52 \
(default 6). `include_organization_info` names the caller's organization on the cover as the \
one that prepared the report. The potential-loss block (null when `include_potential_loss` is \
false) is an illustrative yearly exposure: per domain, a reference impersonation incident cost \
(USD 50,000; CAD 68,000; EUR 46,000; GBP 40,000; AUD 76,000) times (100 - score) / 100, rounded \
to the hundred, one fifth for domains that send no mail. Risk: critical without DMARC, low when \
DMARC rejects and the score is at least 80, moderate or high in between.",
    security(("api_key" = []), ("session" = [])),
    responses(
        (status = 200, description = "The report as data, or as HTML", content(
            (ProspectingReportContent = "application/json"),
            (String = "text/html"),
        )),
        (status = 400, body = ErrorBody), (status = 429, body = RateLimitBody),
    ))]
pub async fn preview_report(
    State(app): State<AppState>,
    principal: Principal,
    _quota: DnsQuota,
    Json(body): Json<PreviewProspectingReport>,
) -> Result<Response, ApiError> {
    Ok(match prospecting::preview(&app, &principal, body).await? {
        Preview::Json(report) => axum::Json(report).into_response(),
        Preview::Html(html) => {
            ([(header::CONTENT_TYPE, "text/html; charset=utf-8")], html).into_response()
        }
    })
}

/// Creates a report with a public 90-day link.
#[utoipa::path(post, path = "/prospecting-reports", tag = "prospecting-reports",
    request_body = CreateProspectingReport,
    description = "Editors, administrators or read-write keys. The same body and audit as the \
preview, without `format`. Answers the stored report with its content and `url`: a link anyone \
can open without credentials until `expires_at` (90 days), serving the report as a PDF typeset \
from the same content as the HTML preview.",
    security(("api_key" = []), ("session" = [])),
    responses((status = 201, body = ProspectingReport), (status = 400, body = ErrorBody),
        (status = 403, body = ErrorBody), (status = 429, body = RateLimitBody)))]
pub async fn create_report(
    State(app): State<AppState>,
    principal: Principal,
    _quota: DnsQuota,
    Json(body): Json<CreateProspectingReport>,
) -> Result<(StatusCode, axum::Json<ProspectingReport>), ApiError> {
    let report = prospecting::create(&app, &principal, body).await?;
    Ok((StatusCode::CREATED, axum::Json(report)))
}

/// Lists reports, newest first.
#[utoipa::path(get, path = "/prospecting-reports", tag = "prospecting-reports", params(PageParams),
    description = "Newest first, without their content (`report` is absent). API keys and \
members not limited to groups see every report of the organization; a member limited to groups \
sees the reports they created and those whose audited domains are all monitored domains of \
their groups.",
    security(("api_key" = []), ("session" = [])),
    responses((status = 200, body = ProspectingReportList), (status = 400, body = ErrorBody)))]
pub async fn list_reports(
    State(app): State<AppState>,
    principal: Principal,
    Query(page): Query<PageParams>,
) -> Result<axum::Json<ProspectingReportList>, ApiError> {
    Ok(axum::Json(prospecting::list(&app, &principal, page).await?))
}

/// One report with its content.
#[utoipa::path(get, path = "/prospecting-reports/{id}", tag = "prospecting-reports",
    params(("id" = uuid::Uuid, Path, description = "Report id")),
    description = "The report with its content (404 when it does not exist or the caller does \
not see it).",
    security(("api_key" = []), ("session" = [])),
    responses((status = 200, body = ProspectingReport), (status = 404, body = ErrorBody)))]
pub async fn get_report(
    State(app): State<AppState>,
    principal: Principal,
    PathId(id): PathId,
) -> Result<axum::Json<ProspectingReport>, ApiError> {
    Ok(axum::Json(prospecting::get(&app, &principal, id).await?))
}

/// Deletes a report and its public link.
#[utoipa::path(delete, path = "/prospecting-reports/{id}", tag = "prospecting-reports",
    params(("id" = uuid::Uuid, Path, description = "Report id")),
    description = "Editors, administrators or read-write keys; a member limited to groups \
deletes only the reports they created (403). The public link answers 404 from then on and the \
stored PDF is removed. 204 with no body.",
    security(("api_key" = []), ("session" = [])),
    responses((status = 204, description = "Deleted"), (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody)))]
pub async fn delete_report(
    State(app): State<AppState>,
    principal: Principal,
    PathId(id): PathId,
) -> Result<StatusCode, ApiError> {
    prospecting::delete(&app, &principal, id).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// This module's routes.
pub fn routes() -> Routes {
    Routes::new()
        .routes(utoipa_axum::routes!(list_reports, create_report))
        .routes(utoipa_axum::routes!(preview_report))
        .routes(utoipa_axum::routes!(get_report, delete_report))
}
