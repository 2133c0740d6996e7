//! The sending-source catalogue (SPEC §2.8, §4.8): optional auth, read from the store, where the
//! curated catalogue embedded in the build (`mailward_domain::sources`) is loaded once per
//! version (`repo::sources::ensure_loaded`).
//!
//! `instructions_curation` is null unless the caller holds the `sources:update` permission; no
//! credential grants that permission yet (it belongs to the curation workflow), so it is null for
//! every caller today.

use crate::auth::OptionalPrincipal;
use crate::error::ApiError;
use crate::extract::{PathId, Query};
use crate::repo::sources as stored;
use crate::state::AppState;
use crate::views::ErrorBody;
use axum::extract::State;
use mailward_domain::sources::{DkimIndexItem, Source, SourceStatus, SpfIndexItem};
use serde::{Deserialize, Serialize};
use time::OffsetDateTime;
use utoipa::{IntoParams, ToSchema};

/// When the embedded catalogue was published (its items' `created_at` and `updated_at`).
const CATALOGUE_PUBLISHED_AT: OffsetDateTime = time::macros::datetime!(2026-11-22 00:00 UTC);

/// One source as the API shows it.
#[derive(Debug, Serialize, ToSchema)]
pub struct SourceView {
    /// The SPEC §2.8 fields (id, external_id, name, homepage, category, support levels,
    /// discovery values, base domains, documentation, instructions ...).
    #[serde(flatten)]
    #[schema(value_type = Object)]
    pub source: Source,
    /// Curation state of the instructions; null unless the caller holds `sources:update`.
    pub instructions_curation: Option<serde_json::Value>,
    #[serde(with = "time::serde::rfc3339")]
    pub created_at: OffsetDateTime,
    #[serde(with = "time::serde::rfc3339")]
    pub updated_at: OffsetDateTime,
}

impl SourceView {
    fn of(source: &Source) -> Self {
        Self {
            source: source.clone(),
            instructions_curation: None,
            created_at: CATALOGUE_PUBLISHED_AT,
            updated_at: CATALOGUE_PUBLISHED_AT,
        }
    }
}

/// `GET /sources` filters.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct SourceFilters {
    /// ACTIVE, PENDING_REVIEW or REJECTED.
    pub status: Option<String>,
    /// Origin of the entries (the embedded catalogue's is `CURATED`).
    pub origin: Option<String>,
}

fn parse_status(raw: &str) -> Result<SourceStatus, ApiError> {
    serde_json::from_value(serde_json::Value::String(raw.to_owned())).map_err(|_| {
        ApiError::invalid_param(
            "status",
            "status must be ACTIVE, PENDING_REVIEW or REJECTED",
        )
    })
}

/// Lists sources.
#[utoipa::path(get, path = "/sources", tag = "sources", params(SourceFilters),
    description = "Optional auth. Every catalogue source, filtered by `status` and `origin`, sorted by \
`external_id`. Ids are stable across deployments (UUID v5 of `external_id`).",
    security((), ("api_key" = []), ("session" = [])),
    responses((status = 200, body = Vec<SourceView>), (status = 400, body = ErrorBody)))]
pub async fn list_sources(
    State(state): State<AppState>,
    _caller: OptionalPrincipal,
    Query(filters): Query<SourceFilters>,
) -> Result<axum::Json<Vec<SourceView>>, ApiError> {
    let status = filters.status.as_deref().map(parse_status).transpose()?;
    let catalogue = stored::load(state.store.as_ref()).await?;
    let sources = catalogue.filter(status, filters.origin.as_deref());
    Ok(axum::Json(
        sources.into_iter().map(SourceView::of).collect(),
    ))
}

/// The SPF index.
#[utoipa::path(get, path = "/sources/spf-index", tag = "sources",
    description = "Optional auth. Sources with at least one SPF value: `values` are safe to publish; \
`recognition_values` identify the source in existing records and are not safe to add; \
`requires_advanced_config` true means never offer a one-click add.",
    security((), ("api_key" = []), ("session" = [])),
    responses((status = 200, body = Vec<Object>)))]
pub async fn spf_index(
    State(state): State<AppState>,
    _caller: OptionalPrincipal,
) -> Result<axum::Json<Vec<SpfIndexItem>>, ApiError> {
    Ok(axum::Json(
        stored::load(state.store.as_ref()).await?.spf_index(),
    ))
}

/// The DKIM index.
#[utoipa::path(get, path = "/sources/dkim-index", tag = "sources",
    description = "Optional auth. Sources with selectors or base domains: `selectors` are naming \
conventions matched against existing keys (not values to publish); a DKIM CNAME target under one \
of `base_domains` belongs to the source.",
    security((), ("api_key" = []), ("session" = [])),
    responses((status = 200, body = Vec<Object>)))]
pub async fn dkim_index(
    State(state): State<AppState>,
    _caller: OptionalPrincipal,
) -> Result<axum::Json<Vec<DkimIndexItem>>, ApiError> {
    Ok(axum::Json(
        stored::load(state.store.as_ref()).await?.dkim_index(),
    ))
}

/// One source.
#[utoipa::path(get, path = "/sources/{id}", tag = "sources",
    params(("id" = uuid::Uuid, Path, description = "Source id")),
    security((), ("api_key" = []), ("session" = [])),
    responses((status = 200, body = SourceView), (status = 400, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn get_source(
    State(state): State<AppState>,
    _caller: OptionalPrincipal,
    PathId(id): PathId,
) -> Result<axum::Json<SourceView>, ApiError> {
    stored::load(state.store.as_ref())
        .await?
        .by_id(id)
        .map(|s| axum::Json(SourceView::of(s)))
        .ok_or_else(|| ApiError::not_found("source"))
}

/// Routes of this module.
pub fn routes() -> utoipa_axum::router::OpenApiRouter<AppState> {
    utoipa_axum::router::OpenApiRouter::new()
        .routes(utoipa_axum::routes!(list_sources))
        .routes(utoipa_axum::routes!(spf_index))
        .routes(utoipa_axum::routes!(dkim_index))
        .routes(utoipa_axum::routes!(get_source))
}
