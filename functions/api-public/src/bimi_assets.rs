//! `GET /bimi/{domain}/{version}/{file}`: the BIMI certificate chain and logo Mailward hosts
//! (the `a=` and `l=` of the record it serves for the domain).

use axum::extract::{Path, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use mailward_http::{AppState, Routes};
use mailward_services::domains::hosting::bimi;

/// Serves a hosted BIMI file.
#[utoipa::path(get, path = "/bimi/{domain}/{version}/{file}", tag = "domains", security(()),
    params(
        ("domain" = String, Path, description = "The domain"),
        ("version" = String, Path, description = "The content-derived version"),
        ("file" = String, Path, description = "certificate.pem or logo.svg"),
    ),
    description = "Public: what mailbox providers fetch. `certificate.pem` (the validated chain, \
leaf first, `application/x-pem-file`) or `logo.svg` (the logo the certificate vouches for, \
`image/svg+xml`), as uploaded with `POST /domains/{id}/bimi/assets`. The version is derived from \
the content, so a URL always serves the same bytes (cached for a year). 404 otherwise.",
    responses(
        (status = 200, description = "The file", content_type = "application/x-pem-file"),
        (status = 404, description = "No such hosted file", content_type = "text/plain"),
    ))]
pub async fn bimi_asset(
    State(app): State<AppState>,
    Path((domain, version, file)): Path<(String, String, String)>,
) -> Response {
    match bimi::asset(&app, &domain, &version, &file).await {
        Some((bytes, kind)) => (
            [
                (header::CONTENT_TYPE, kind),
                (header::CACHE_CONTROL, "public, max-age=31536000, immutable"),
            ],
            bytes,
        )
            .into_response(),
        None => (
            StatusCode::NOT_FOUND,
            [(header::CONTENT_TYPE, "text/plain")],
            "no such hosted BIMI file\n",
        )
            .into_response(),
    }
}

/// Routes of this module.
pub fn routes() -> Routes {
    Routes::new().routes(utoipa_axum::routes!(bimi_asset))
}
