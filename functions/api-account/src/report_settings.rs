//! The scheduled report's settings (an extension beyond SPEC): `/report-settings`,
//! `/report-settings/{id}` and `/report-settings/{id}/send`.

use axum::extract::State;
use axum::http::StatusCode;
use mailward_api_types::ErrorBody;
use mailward_api_types::scheduled_reports::{
    CreateReportSettings, ReportSendQueued, ReportSettings, ReportSettingsList,
    UpdateReportSettings,
};
use mailward_http::extract::{Json, PathId};
use mailward_http::{ApiError, AppState, Principal, Routes};

/// The organization's scheduled reports.
#[utoipa::path(get, path = "/report-settings", tag = "organizations",
    description = "Extension beyond SPEC. The scheduled reports the caller sees: the \
organization's (to callers without a group limit) and each group's (to whoever sees the \
group), with cadence, recipients, branding, when each is sent next and what it sent last. Any \
member or key reads.",
    security(("api_key" = []), ("session" = [])),
    responses((status = 200, body = ReportSettingsList)))]
pub async fn list_report_settings(
    State(app): State<AppState>,
    principal: Principal,
) -> Result<axum::Json<ReportSettingsList>, ApiError> {
    Ok(axum::Json(
        mailward_reporting::list(&app, &principal).await?,
    ))
}

/// Schedules a report.
#[utoipa::path(post, path = "/report-settings", tag = "organizations",
    request_body = CreateReportSettings,
    description = "Extension beyond SPEC. Administrators and read-write keys (the organization's \
report: not limited to groups; a group's: seeing the group). Schedules a PDF report by mail \
for the organization (`scope` `{\"type\": \"organization\"}`, the default) or one group \
(`{\"type\": \"group\", \"group_id\"}`: an MSP's customer), `weekly` (Mondays at 06:00 UTC, \
covering the API's `last_7_days` that day: the 7 days that ended on Sunday) or `monthly` (the \
1st at 06:00 UTC, covering the API's `last_30_days` that day), to 1 to 20 `recipients`. Per \
domain it gives the score and its change since the previous report (band changes named), the \
rollout stage, the daily volume and DMARC pass share as a small vector chart, the window's \
messages and pass rate against the window before, new senders, open tasks by priority and \
what to do next; every figure is the API's for that window on the day it is sent \
(`GET /domains/{id}/reports/summary`, `GET /report-data/summary`, \
`GET /report-data/domains/{id}/timeseries` with the same `period`). `branding` white-labels \
it: `name` on the cover (default the group's or the organization's name), `logo_url` (a PNG \
or JPEG at a public https URL, at most 1 MiB; default the organization's `logo_url`; left out \
when unreadable) and `footer` on every page. Mail follows the `scheduled_reports` \
notification switch, with one-click unsubscribe. One report per organization and per group: \
409 `report_settings_exist` for a second. 400 names the field (`scope.type`, \
`scope.group_id`, `cadence`, `recipients`, `branding.name`, `branding.logo_url`, \
`branding.footer`).",
    security(("api_key" = []), ("session" = [])),
    responses((status = 201, body = ReportSettings), (status = 400, body = ErrorBody),
        (status = 403, body = ErrorBody), (status = 409, body = ErrorBody)))]
pub async fn create_report_settings(
    State(app): State<AppState>,
    principal: Principal,
    Json(body): Json<CreateReportSettings>,
) -> Result<(StatusCode, axum::Json<ReportSettings>), ApiError> {
    Ok((
        StatusCode::CREATED,
        axum::Json(mailward_reporting::create(&app, &principal, body).await?),
    ))
}

/// One scheduled report.
#[utoipa::path(get, path = "/report-settings/{id}", tag = "organizations",
    params(("id" = uuid::Uuid, Path, description = "Report settings id")),
    description = "Extension beyond SPEC. One scheduled report's settings.",
    security(("api_key" = []), ("session" = [])),
    responses((status = 200, body = ReportSettings), (status = 404, body = ErrorBody)))]
pub async fn get_report_settings(
    State(app): State<AppState>,
    principal: Principal,
    PathId(id): PathId,
) -> Result<axum::Json<ReportSettings>, ApiError> {
    Ok(axum::Json(
        mailward_reporting::get(&app, &principal, id).await?,
    ))
}

/// Changes a scheduled report.
#[utoipa::path(post, path = "/report-settings/{id}", tag = "organizations",
    params(("id" = uuid::Uuid, Path, description = "Report settings id")),
    request_body = UpdateReportSettings,
    description = "Extension beyond SPEC. Administrators and read-write keys. Changes the \
fields given (`branding` field by field; `\"\"` clears one). A new `cadence`, or turning it \
back on, schedules the next send from now. 400 names the field; 409 when the settings changed \
meanwhile.",
    security(("api_key" = []), ("session" = [])),
    responses((status = 200, body = ReportSettings), (status = 400, body = ErrorBody),
        (status = 403, body = ErrorBody), (status = 404, body = ErrorBody), (status = 409, body = ErrorBody)))]
pub async fn update_report_settings(
    State(app): State<AppState>,
    principal: Principal,
    PathId(id): PathId,
    Json(body): Json<UpdateReportSettings>,
) -> Result<axum::Json<ReportSettings>, ApiError> {
    Ok(axum::Json(
        mailward_reporting::update(&app, &principal, id, body).await?,
    ))
}

/// Removes a scheduled report.
#[utoipa::path(delete, path = "/report-settings/{id}", tag = "organizations",
    params(("id" = uuid::Uuid, Path, description = "Report settings id")),
    description = "Extension beyond SPEC. Administrators and read-write keys.",
    security(("api_key" = []), ("session" = [])),
    responses((status = 204, description = "Removed"), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn delete_report_settings(
    State(app): State<AppState>,
    principal: Principal,
    PathId(id): PathId,
) -> Result<StatusCode, ApiError> {
    mailward_reporting::delete(&app, &principal, id).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// Sends a scheduled report now.
#[utoipa::path(post, path = "/report-settings/{id}/send", tag = "organizations",
    params(("id" = uuid::Uuid, Path, description = "Report settings id")),
    description = "Extension beyond SPEC. Administrators and read-write keys. Builds the report \
for today's window and mails it to its recipients now, beside the schedule (which it does not \
move, nor the scores the next scheduled report compares with). 202: a background job builds \
and sends it within seconds.",
    security(("api_key" = []), ("session" = [])),
    responses((status = 202, body = ReportSendQueued), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn send_report_now(
    State(app): State<AppState>,
    principal: Principal,
    PathId(id): PathId,
) -> Result<(StatusCode, axum::Json<ReportSendQueued>), ApiError> {
    Ok((
        StatusCode::ACCEPTED,
        axum::Json(mailward_reporting::send_now(&app, &principal, id).await?),
    ))
}

/// Routes of this module.
pub fn routes() -> Routes {
    Routes::new()
        .routes(utoipa_axum::routes!(
            list_report_settings,
            create_report_settings
        ))
        .routes(utoipa_axum::routes!(
            get_report_settings,
            update_report_settings,
            delete_report_settings
        ))
        .routes(utoipa_axum::routes!(send_report_now))
}
