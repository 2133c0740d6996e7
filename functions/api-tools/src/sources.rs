//! The sending-source catalogue (SPEC §2.8, §4.8): optional auth, read from the store.

use axum::extract::State;
use mailward_api_types::ErrorBody;
use mailward_api_types::sources::{SourceFilters, SourceView};
use mailward_domain::sources::{DkimIndexItem, SpfIndexItem};
use mailward_http::extract::{PathId, Query};
use mailward_http::{ApiError, AppState, OptionalPrincipal, Routes};
use mailward_services::sources;

/// Lists sources.
#[utoipa::path(get, path = "/sources", tag = "sources", params(SourceFilters),
    description = "Optional auth. Every catalogue source, filtered by `status` and `origin`, sorted by \
`external_id`. Ids are stable across deployments (UUID v5 of `external_id`).",
    security((), ("api_key" = []), ("session" = [])),
    responses((status = 200, body = Vec<SourceView>), (status = 400, body = ErrorBody)))]
pub async fn list_sources(
    State(app): State<AppState>,
    _caller: OptionalPrincipal,
    Query(filters): Query<SourceFilters>,
) -> Result<axum::Json<Vec<SourceView>>, ApiError> {
    Ok(axum::Json(sources::list(&app, &filters).await?))
}

/// The SPF index.
#[utoipa::path(get, path = "/sources/spf-index", tag = "sources",
    description = "Optional auth. Sources with at least one SPF value: `values` are safe to publish; \
`recognition_values` identify the source in existing records and are not safe to add; \
`requires_advanced_config` true means never offer a one-click add.",
    security((), ("api_key" = []), ("session" = [])),
    responses((status = 200, body = Vec<SpfIndexItem>)))]
pub async fn spf_index(
    State(app): State<AppState>,
    _caller: OptionalPrincipal,
) -> Result<axum::Json<Vec<SpfIndexItem>>, ApiError> {
    Ok(axum::Json(sources::spf_index(&app).await?))
}

/// The DKIM index.
#[utoipa::path(get, path = "/sources/dkim-index", tag = "sources",
    description = "Optional auth. Sources with selectors or base domains: `selectors` are naming \
conventions matched against existing keys (not values to publish); a DKIM CNAME target under one \
of `base_domains` belongs to the source.",
    security((), ("api_key" = []), ("session" = [])),
    responses((status = 200, body = Vec<DkimIndexItem>)))]
pub async fn dkim_index(
    State(app): State<AppState>,
    _caller: OptionalPrincipal,
) -> Result<axum::Json<Vec<DkimIndexItem>>, ApiError> {
    Ok(axum::Json(sources::dkim_index(&app).await?))
}

/// One source.
#[utoipa::path(get, path = "/sources/{id}", tag = "sources",
    params(("id" = uuid::Uuid, Path, description = "Source id")),
    security((), ("api_key" = []), ("session" = [])),
    responses((status = 200, body = SourceView), (status = 400, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn get_source(
    State(app): State<AppState>,
    _caller: OptionalPrincipal,
    PathId(id): PathId,
) -> Result<axum::Json<SourceView>, ApiError> {
    Ok(axum::Json(sources::get(&app, id).await?))
}

/// Routes of this module.
pub fn routes() -> Routes {
    Routes::new()
        .routes(utoipa_axum::routes!(list_sources))
        .routes(utoipa_axum::routes!(spf_index))
        .routes(utoipa_axum::routes!(dkim_index))
        .routes(utoipa_axum::routes!(get_source))
}
