//! Report data out as CSV or JSON, streamed: one domain's, or every visible domain's.

use axum::body::Body;
use axum::extract::State;
use axum::http::header;
use axum::response::{IntoResponse, Response};
use futures::StreamExt as _;
use mailward_api_types::ErrorBody;
use mailward_http::extract::{PathId, Query};
use mailward_http::{ApiError, AppState, Principal, Routes};
use mailward_services::reports::export::{self, Export, ExportParams};
use serde::Deserialize;
use utoipa::IntoParams;

/// `format`, `period` and `data` of an export.
#[derive(Debug, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ExportQuery {
    /// csv (default) or json.
    #[param(value_type = Option<ExportFormat>, inline)]
    pub format: Option<String>,
    /// last_7_days, last_30_days (default), last_90_days or last_365_days; ending yesterday
    /// (UTC), clamped to the plan's retention.
    #[param(value_type = Option<mailward_api_types::tls_reports::LongPeriod>, inline)]
    pub period: Option<String>,
    /// daily (default: one line per domain and day) or sources (one line per domain, day,
    /// source IP and header-from).
    #[param(value_type = Option<ExportData>, inline)]
    pub data: Option<String>,
}

mailward_api_types::words!(
    /// `format` of an export.
    pub ExportFormat = ["csv", "json"]
);
mailward_api_types::words!(
    /// `data` of an export.
    pub ExportData = ["daily", "sources"]
);

impl From<ExportQuery> for ExportParams {
    fn from(q: ExportQuery) -> Self {
        ExportParams {
            format: q.format,
            period: q.period,
            data: q.data,
        }
    }
}

fn respond(export: Export) -> Response {
    let body = Body::from_stream(export.body.map(|piece| {
        piece.map_err(|e| {
            // Mid-stream the status is sent: the body is cut short, and the cause logged.
            tracing::error!(error = %e, "report export failed mid-stream");
            std::io::Error::other(e.to_string())
        })
    }));
    (
        [
            (header::CONTENT_TYPE, export.content_type.to_owned()),
            (
                header::CONTENT_DISPOSITION,
                format!("attachment; filename=\"{}\"", export.filename),
            ),
        ],
        body,
    )
        .into_response()
}

const COLUMNS: &str = "Columns of `data=daily`: date, domain, volume, compliant (passed DMARC), \
failing (failed, not forwarded), forwarded, dmarc_pass, spf_aligned_pass, dkim_aligned_pass, \
quarantined, rejected. Columns of `data=sources`: date, domain, source_ip, header_from, \
envelope_from, dkim_signers (space-separated `domain/selector`), volume, dmarc_pass, \
spf_aligned_pass, dkim_aligned_pass, forwarded, quarantined, rejected, then who owns the \
source (an extension; empty in CSV and null in JSON when unknown): ptr (forward-confirmed \
reverse DNS), asn, as_name, country_code (IP data: IPinfo Lite, CC BY-SA 4.0). CSV has a header \
line and CRLF line ends; cells a spreadsheet would run as a formula (starting with =, +, -, @) are \
prefixed with '. JSON is an array of objects with the same names. The body streams one domain \
at a time (`Content-Disposition: attachment` with a file name).";

/// A domain's report data as CSV or JSON.
#[utoipa::path(get, path = "/domains/{id}/reports/export", tag = "reports",
    params(("id" = uuid::Uuid, Path, description = "Domain id"), ExportQuery),
    description = COLUMNS,
    security(("api_key" = []), ("session" = [])),
    responses(
        (status = 200, description = "CSV or JSON, streamed", content((String = "text/csv"), (Vec<Object> = "application/json"))),
        (status = 400, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn export_domain_reports(
    State(app): State<AppState>,
    principal: Principal,
    PathId(id): PathId,
    Query(query): Query<ExportQuery>,
) -> Result<Response, ApiError> {
    let params = ExportParams::from(query);
    Ok(respond(
        export::domain_export(&app, &principal, id, &params).await?,
    ))
}

/// Every visible domain's report data as CSV or JSON.
#[utoipa::path(get, path = "/report-data/export", tag = "reports",
    params(ExportQuery),
    description = COLUMNS,
    security(("api_key" = []), ("session" = [])),
    responses(
        (status = 200, description = "CSV or JSON, streamed, domains by name", content((String = "text/csv"), (Vec<Object> = "application/json"))),
        (status = 400, body = ErrorBody)))]
pub async fn export_organization_reports(
    State(app): State<AppState>,
    principal: Principal,
    Query(query): Query<ExportQuery>,
) -> Result<Response, ApiError> {
    let params = ExportParams::from(query);
    Ok(respond(
        export::organization_export(&app, &principal, &params).await?,
    ))
}

/// Routes of this module.
pub fn routes() -> Routes {
    Routes::new()
        .routes(utoipa_axum::routes!(export_domain_reports))
        .routes(utoipa_axum::routes!(export_organization_reports))
}
