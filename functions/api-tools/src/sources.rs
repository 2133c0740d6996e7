//! The sending-source catalogue (SPEC §2.8, §4.8): optional auth, read from the store.

use axum::extract::State;
use axum::http::StatusCode;
use mailward_api_types::ErrorBody;
use mailward_api_types::sources::{CustomSourceRequest, SourceFilters, SourceView};
use mailward_domain::sources::{DkimIndexItem, SpfIndexItem};
use mailward_http::extract::{Json, PathId, Query};
use mailward_http::{ApiError, AppState, OptionalPrincipal, Principal, Routes};
use mailward_services::sources;

/// Lists sources.
#[utoipa::path(get, path = "/sources", tag = "sources", params(SourceFilters),
    description = "Optional auth. Every catalogue source, filtered by `status` and `origin`, sorted by \
`external_id`. Ids are stable across deployments (UUID v5 of `external_id`). With a credential, \
the organization's own sources (an extension: `is_custom` true, origin `CUSTOM`, defined with \
`POST /sources`) are listed too; nobody else sees them. Sources staff promoted from senders seen \
in reports have origin `PROMOTED`. Candidates awaiting staff review are never listed here.",
    security((), ("api_key" = []), ("session" = [])),
    responses((status = 200, body = Vec<SourceView>), (status = 400, body = ErrorBody)))]
pub async fn list_sources(
    State(app): State<AppState>,
    caller: OptionalPrincipal,
    Query(filters): Query<SourceFilters>,
) -> Result<axum::Json<Vec<SourceView>>, ApiError> {
    Ok(axum::Json(
        sources::list(&app, caller.caller(), &filters).await?,
    ))
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
    caller: OptionalPrincipal,
    PathId(id): PathId,
) -> Result<axum::Json<SourceView>, ApiError> {
    Ok(axum::Json(sources::get(&app, caller.caller(), id).await?))
}

/// Defines one of the organization's own sources.
#[utoipa::path(post, path = "/sources", tag = "sources", request_body = CustomSourceRequest,
    description = "An extension beyond SPEC §4.8: the organization names a sender the catalogue \
lacks (an in-house relay, a regional CRM) so its reports say who it is. `name` is required, and \
`sending_domains` or `envelope_froms`: report rows whose PTR name, DKIM signer or envelope domain \
is under one of them are this source's, before any catalogue source. Answers the source with \
`is_custom` true and origin `CUSTOM`; only this organization sees it. Administrators and editors \
without a group limit (it applies to every domain); at most 100 per organization (409). The \
senders of the organization's domains with reports are identified again. Recorded as \
`source.created`.",
    security(("api_key" = []), ("session" = [])),
    responses((status = 201, body = SourceView), (status = 400, body = ErrorBody),
        (status = 403, body = ErrorBody), (status = 409, body = ErrorBody)))]
pub async fn create_custom_source(
    State(app): State<AppState>,
    principal: Principal,
    Json(body): Json<CustomSourceRequest>,
) -> Result<(StatusCode, axum::Json<SourceView>), ApiError> {
    let view = sources::custom::create(&app, &principal, body).await?;
    Ok((StatusCode::CREATED, axum::Json(view)))
}

/// Updates one of the organization's own sources.
#[utoipa::path(post, path = "/sources/{id}", tag = "sources", request_body = CustomSourceRequest,
    params(("id" = uuid::Uuid, Path, description = "Source id")),
    description = "An extension: the fields sent replace the stored ones (a list replaces the \
whole list). Only the organization's own sources (`is_custom`); catalogue sources are 404 here. \
Recorded as `source.updated`.",
    security(("api_key" = []), ("session" = [])),
    responses((status = 200, body = SourceView), (status = 400, body = ErrorBody),
        (status = 403, body = ErrorBody), (status = 404, body = ErrorBody), (status = 409, body = ErrorBody)))]
pub async fn update_custom_source(
    State(app): State<AppState>,
    principal: Principal,
    PathId(id): PathId,
    Json(body): Json<CustomSourceRequest>,
) -> Result<axum::Json<SourceView>, ApiError> {
    Ok(axum::Json(
        sources::custom::update(&app, &principal, id, body).await?,
    ))
}

/// Deletes one of the organization's own sources.
#[utoipa::path(delete, path = "/sources/{id}", tag = "sources",
    params(("id" = uuid::Uuid, Path, description = "Source id")),
    description = "An extension: its senders become unknown again at their next identification \
(queued at once). Recorded as `source.deleted`.",
    security(("api_key" = []), ("session" = [])),
    responses((status = 204), (status = 400, body = ErrorBody), (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody)))]
pub async fn delete_custom_source(
    State(app): State<AppState>,
    principal: Principal,
    PathId(id): PathId,
) -> Result<StatusCode, ApiError> {
    sources::custom::delete(&app, &principal, id).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// Routes of this module.
pub fn routes() -> Routes {
    Routes::new()
        .routes(utoipa_axum::routes!(list_sources, create_custom_source))
        .routes(utoipa_axum::routes!(spf_index))
        .routes(utoipa_axum::routes!(dkim_index))
        .routes(utoipa_axum::routes!(
            get_source,
            update_custom_source,
            delete_custom_source
        ))
}
