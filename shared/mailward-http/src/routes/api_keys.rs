//! API keys (SPEC §5.4): listed and created by a signed-in administrator; rotated or deleted by
//! an administrator or with a read-write key. A rotated or deleted key answers 401 at once.

use crate::auth::{Credential, Principal};
use crate::error::ApiError;
use crate::extract::{Json, PathId, Query};
use crate::pagination::PageParams;
use crate::repo::api_keys;
use crate::state::AppState;
use crate::views::{self, ApiKeyAccessView, ApiKeyList, ApiKeyWithSecret, ErrorBody};
use axum::extract::State;
use axum::http::StatusCode;
use serde::Deserialize;
use utoipa::ToSchema;

/// `POST /api-keys` body.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateApiKeyRequest {
    /// A label for people, 1 to 100 characters.
    #[schema(min_length = 1, max_length = 100)]
    pub name: String,
    /// `read_write` (default) or `read_only`.
    #[serde(default)]
    pub access: ApiKeyAccessView,
}

fn validate_name(raw: &str) -> Result<String, ApiError> {
    let name = raw.trim();
    let chars = name.chars().count();
    if chars == 0 || chars > 100 || name.chars().any(char::is_control) {
        return Err(ApiError::invalid_param(
            "name",
            "name must be 1 to 100 printable characters",
        ));
    }
    Ok(name.to_owned())
}

/// Lists the organization's keys (never the keys themselves).
#[utoipa::path(get, path = "/api-keys", tag = "api-keys", params(PageParams),
    description = "Signed-in administrators only (Bearer session); API keys get 403.",
    security(("session" = [])),
    responses(
        (status = 200, body = ApiKeyList),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
    ))]
pub async fn list_api_keys(
    State(state): State<AppState>,
    principal: Principal,
    Query(page): Query<PageParams>,
) -> Result<axum::Json<ApiKeyList>, ApiError> {
    principal.require_session_admin()?;
    let keys = api_keys::list(state.store.as_ref(), principal.org_id).await?;
    let (keys, page_info) = page.paginate(keys)?;
    Ok(axum::Json(ApiKeyList {
        data: keys.iter().map(views::ApiKey::from).collect(),
        page_info,
    }))
}

/// Creates a key; the response is the only time the key is shown.
#[utoipa::path(post, path = "/api-keys", tag = "api-keys", request_body = CreateApiKeyRequest,
    description = "Signed-in administrators only (Bearer session); API keys get 403, so a leaked key \
cannot mint more keys.",
    security(("session" = [])),
    responses(
        (status = 201, body = ApiKeyWithSecret),
        (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
    ))]
pub async fn create_api_key(
    State(state): State<AppState>,
    principal: Principal,
    Json(body): Json<CreateApiKeyRequest>,
) -> Result<(StatusCode, axum::Json<ApiKeyWithSecret>), ApiError> {
    let account = principal.require_session_admin()?;
    let name = validate_name(&body.name)?;
    let key = api_keys::generate(
        principal.org_id,
        name,
        body.access.into(),
        Some(account),
        state.clock.now(),
    );
    state
        .store
        .transact(api_keys::create_ops(&key.meta)?)
        .await?;
    Ok((
        StatusCode::CREATED,
        axum::Json(ApiKeyWithSecret {
            api_key: views::ApiKey::from(&key.meta),
            key: key.secret,
        }),
    ))
}

/// Replaces a key's secret; the old secret answers 401 from now on.
#[utoipa::path(post, path = "/api-keys/{id}/rotate", tag = "api-keys",
    params(("id" = uuid::Uuid, Path, description = "API key id")),
    description = "Administrators or read-write API keys (a key may rotate itself). The new key is \
shown once; the old one is refused immediately.",
    security(("api_key" = []), ("session" = [])),
    responses(
        (status = 200, body = ApiKeyWithSecret),
        (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody), (status = 404, body = ErrorBody), (status = 409, body = ErrorBody),
    ))]
pub async fn rotate_api_key(
    State(state): State<AppState>,
    principal: Principal,
    PathId(id): PathId,
) -> Result<axum::Json<ApiKeyWithSecret>, ApiError> {
    principal.require_admin()?;
    let current = api_keys::get(state.store.as_ref(), principal.org_id, id)
        .await?
        .ok_or_else(|| ApiError::not_found("API key"))?;
    let rotated = api_keys::rotate(state.store.as_ref(), current, state.clock.now()).await?;
    Ok(axum::Json(ApiKeyWithSecret {
        api_key: views::ApiKey::from(&rotated.meta),
        key: rotated.secret,
    }))
}

/// Deletes a key; it answers 401 from now on.
#[utoipa::path(delete, path = "/api-keys/{id}", tag = "api-keys",
    params(("id" = uuid::Uuid, Path, description = "API key id")),
    description = "Administrators or read-write API keys. A key may delete itself.",
    security(("api_key" = []), ("session" = [])),
    responses(
        (status = 204, description = "Deleted"),
        (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody), (status = 404, body = ErrorBody),
    ))]
pub async fn delete_api_key(
    State(state): State<AppState>,
    principal: Principal,
    PathId(id): PathId,
) -> Result<StatusCode, ApiError> {
    principal.require_admin()?;
    let current = api_keys::get(state.store.as_ref(), principal.org_id, id)
        .await?
        .ok_or_else(|| ApiError::not_found("API key"))?;
    state
        .store
        .transact(api_keys::delete_ops(&current.value, Some(current.version)))
        .await?;
    if matches!(principal.credential, Credential::ApiKey { key_id, .. } if key_id == id) {
        tracing::info!(api_key.id = %id, "an API key deleted itself");
    }
    Ok(StatusCode::NO_CONTENT)
}

/// Routes of this module.
pub fn routes() -> utoipa_axum::router::OpenApiRouter<AppState> {
    utoipa_axum::router::OpenApiRouter::new()
        .routes(utoipa_axum::routes!(list_api_keys, create_api_key))
        .routes(utoipa_axum::routes!(rotate_api_key))
        .routes(utoipa_axum::routes!(delete_api_key))
}
