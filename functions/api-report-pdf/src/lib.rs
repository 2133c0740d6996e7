//! The `api-report-pdf` function: the public download of a prospecting report
//! (`GET /prospecting-reports/{id}/download`).
//!
//! Why a function of its own: it is the only one that links the PDF engine and its fonts, so
//! the other Lambdas stay small and start fast. The first download typesets the stored content
//! and keeps the PDF in object storage; later downloads serve the stored bytes.

use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use mailward_api_types::ErrorBody;
use mailward_http::extract::PathId;
use mailward_http::{ApiError, AppState, Routes};
use mailward_services::error::{ErrorKind, ServiceError};
use mailward_services::html::escape;
use mailward_services::prospecting::{self, Download};

/// Whether the client asked for a page rather than JSON (SPEC §7.5): the first media type of
/// `Accept` is `text/html` (a browser following the link) or `text/plain`. Any other `Accept`,
/// or none, gets the JSON error body.
fn wants_page(headers: &HeaderMap) -> bool {
    let first = headers
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .and_then(|accept| accept.split(',').next())
        .and_then(|media| media.split(';').next())
        .map(|media| media.trim().to_ascii_lowercase());
    matches!(first.as_deref(), Some("text/html" | "text/plain"))
}

fn page(status: StatusCode, title: &str, message: &str) -> Response {
    let body = format!(
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" \
content=\"width=device-width, initial-scale=1\"><title>{t}</title><style>body{{font:16px/1.5 \
-apple-system,'Segoe UI',Roboto,Arial,sans-serif;background:#f4f6fa;color:#1b2330;margin:0}}main{{max-width:560px;\
margin:12vh auto;background:#fff;border:1px solid #d9dee7;border-radius:12px;padding:32px}}h1{{margin-top:0;\
font-size:22px}}</style></head><body><main><h1>{t}</h1><p>{m}</p></main></body></html>",
        t = escape(title),
        m = escape(message)
    );
    (
        status,
        [
            (header::CONTENT_TYPE, "text/html; charset=utf-8"),
            (header::CACHE_CONTROL, "no-store"),
        ],
        body,
    )
        .into_response()
}

fn refusal(err: ServiceError, headers: &HeaderMap) -> Response {
    let shown = match err.kind() {
        ErrorKind::Gone => Some((
            StatusCode::GONE,
            "This report has expired",
            "Prospecting report links work for 90 days. Ask whoever sent it for a new report.",
        )),
        ErrorKind::NotFound => Some((
            StatusCode::NOT_FOUND,
            "Report not found",
            "There is no report at this address. It may have been deleted.",
        )),
        _ => None,
    };
    match shown {
        Some((status, title, message)) if wants_page(headers) => page(status, title, message),
        _ => ApiError::from(err).into_response(),
    }
}

/// Downloads a prospecting report as a PDF.
#[utoipa::path(get, path = "/prospecting-reports/{id}/download", tag = "prospecting-reports",
    params(("id" = uuid::Uuid, Path, description = "Report id")),
    description = "No credentials: anyone with the link (the report's `url`) opens the PDF for \
90 days after creation. An id that never existed or was deleted answers 404 `resource_not_found`; after \
90 days the link answers 410 `prospecting_report_expired` and the stored PDF is removed. Both \
refusals are the JSON error body, as every error is (SPEC §7.5), unless the first type of `Accept` \
is `text/html` (a browser following the link: a page saying why; a 404 to `text/plain` is the plain \
status line). \
The PDF is typeset once, on the first download, from the content stored at creation, and is \
served as `inline` with a file name built from the first audited domain.",
    security(()),
    responses(
        (status = 200, description = "The report", content_type = "application/pdf", body = Vec<u8>),
        (status = 404, description = "Unknown or deleted: the JSON error body, or a page for `Accept: text/html`", content(
            (ErrorBody = "application/json"),
            (String = "text/html"),
        )),
        (status = 410, description = "Expired: the JSON error body, or a page for `Accept: text/html`", content(
            (ErrorBody = "application/json"),
            (String = "text/html"),
        )),
    ))]
pub async fn download_report(
    State(app): State<AppState>,
    headers: HeaderMap,
    PathId(id): PathId,
) -> Response {
    let download = match prospecting::download(&app, id).await {
        Ok(download) => download,
        Err(err) => return refusal(err, &headers),
    };
    let (pdf, name) = match download {
        Download::Pdf(pdf, name) => (pdf, name),
        Download::Render(content) => {
            let name = prospecting::file_name(&content, id);
            let typeset = tokio::task::spawn_blocking(move || mailward_pdf::render(&content)).await;
            let pdf = match typeset {
                Ok(Ok(pdf)) => pdf,
                Ok(Err(e)) => return refusal(ServiceError::internal(e), &headers),
                Err(e) => return refusal(ServiceError::internal(e), &headers),
            };
            if let Err(err) = prospecting::store_pdf(&app, id, pdf.clone()).await {
                tracing::warn!(%id, error = %err.message(), "typeset PDF not stored; served anyway");
            }
            (pdf, name)
        }
    };
    (
        StatusCode::OK,
        [
            (header::CONTENT_TYPE, "application/pdf".to_owned()),
            (
                header::CONTENT_DISPOSITION,
                format!("inline; filename=\"{name}\""),
            ),
            (header::CACHE_CONTROL, "private, max-age=300".to_owned()),
        ],
        pdf,
    )
        .into_response()
}

/// This function's routes.
pub fn routes() -> Routes {
    Routes::new().routes(utoipa_axum::routes!(download_report))
}
