//! Report data (SPEC §4.5): the organization's figures over a period, per domain, per sender
//! and per day.

use axum::extract::State;
use mailward_api_types::ErrorBody;
use mailward_api_types::report_data::{
    ReportDataDomains, ReportDataParams, ReportDataSenders, ReportDataSummary, ReportDataTimeseries,
};
use mailward_http::extract::{PathId, Query};
use mailward_http::{ApiError, AppState, Principal, Routes};
use mailward_services::reports::data;

/// The organization's report figures over a period.
#[utoipa::path(get, path = "/report-data/summary", tag = "reports",
    params(ReportDataParams),
    description = "Every domain the caller sees (group limits apply), summed over `period` \
(last_1_day = yesterday, last_7_days (default), last_30_days, last_365_days; the window ends \
yesterday (UTC) and starts no earlier than the plan keeps data: free 30 days, paid 365). \
`volume` splits into `compliant` (passed DMARC), `failing` (failed, not forwarded) and \
`forwarded`; `quarantined` and `rejected` are receivers' dispositions; pass shares are 0-100 \
with two decimals, SPF and DKIM aligned. `senders` counts the domains' senders seen in the \
period (`known_senders` recognised in the catalogue, `senders_requiring_confirmation` waiting \
for a person); `top_domains` names the ten domains with the most mail. Figures follow imports \
within seconds (they are kept by the identification that runs after each import).",
    security(("api_key" = []), ("session" = [])),
    responses((status = 200, body = ReportDataSummary), (status = 400, body = ErrorBody)))]
pub async fn report_data_summary(
    State(app): State<AppState>,
    principal: Principal,
    Query(params): Query<ReportDataParams>,
) -> Result<axum::Json<ReportDataSummary>, ApiError> {
    Ok(axum::Json(data::summary(&app, &principal, &params).await?))
}

/// Each domain's score and report figures over a period.
#[utoipa::path(get, path = "/report-data/domains", tag = "reports",
    params(ReportDataParams),
    description = "Every domain the caller sees, most mail first (then by name), with its \
`score`, `score_band` (critical, bad, good, great), published `policy` and the period's \
figures (as in the summary). Not paginated: one line per domain.",
    security(("api_key" = []), ("session" = [])),
    responses((status = 200, body = ReportDataDomains), (status = 400, body = ErrorBody)))]
pub async fn report_data_domains(
    State(app): State<AppState>,
    principal: Principal,
    Query(params): Query<ReportDataParams>,
) -> Result<axum::Json<ReportDataDomains>, ApiError> {
    Ok(axum::Json(data::domains(&app, &principal, &params).await?))
}

/// A domain's senders over a period.
#[utoipa::path(get, path = "/report-data/domains/{id}/senders", tag = "reports",
    params(("id" = uuid::Uuid, Path, description = "Domain id"), ReportDataParams),
    description = "Every sender of the period, most mail first: the domain's DomainSources \
(`sender_id`, see `GET /domains/{id}/sources`) matched by source IP, and any address no sender \
lists yet on its own (`sender_id` null, named by the address). `share_pct` is the sender's \
share of `total_volume`; `failing` failed DMARC and was not forwarded.",
    security(("api_key" = []), ("session" = [])),
    responses((status = 200, body = ReportDataSenders), (status = 400, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn report_data_senders(
    State(app): State<AppState>,
    principal: Principal,
    PathId(id): PathId,
    Query(params): Query<ReportDataParams>,
) -> Result<axum::Json<ReportDataSenders>, ApiError> {
    Ok(axum::Json(
        data::senders(&app, &principal, id, &params).await?,
    ))
}

/// A domain's daily volume over a period.
#[utoipa::path(get, path = "/report-data/domains/{id}/timeseries", tag = "reports",
    params(("id" = uuid::Uuid, Path, description = "Domain id"), ReportDataParams),
    description = "One point per UTC day of the window, oldest first (days without reports at \
0): `volume`, `compliant`, `failing`, `forwarded` and the aligned SPF and DKIM passes.",
    security(("api_key" = []), ("session" = [])),
    responses((status = 200, body = ReportDataTimeseries), (status = 400, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn report_data_timeseries(
    State(app): State<AppState>,
    principal: Principal,
    PathId(id): PathId,
    Query(params): Query<ReportDataParams>,
) -> Result<axum::Json<ReportDataTimeseries>, ApiError> {
    Ok(axum::Json(
        data::timeseries(&app, &principal, id, &params).await?,
    ))
}

/// Routes of this module.
pub fn routes() -> Routes {
    Routes::new()
        .routes(utoipa_axum::routes!(report_data_summary))
        .routes(utoipa_axum::routes!(report_data_domains))
        .routes(utoipa_axum::routes!(report_data_senders))
        .routes(utoipa_axum::routes!(report_data_timeseries))
}
