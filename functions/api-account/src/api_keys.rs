//! API keys (SPEC §5.4): listed and created by a signed-in administrator; rotated or deleted by
//! an administrator or with a read-write key. A rotated or deleted key answers 401 at once.

use axum::extract::State;
use axum::http::StatusCode;
use mailward_api_types::api_keys::{ApiKeyList, ApiKeyWithSecret, CreateApiKeyRequest};
use mailward_api_types::{ErrorBody, PageParams};
use mailward_http::extract::{Json, PathId, Query};
use mailward_http::{ApiError, AppState, Principal, Routes};
use mailward_services::api_keys;

/// Lists the organization's keys (never the keys themselves).
#[utoipa::path(get, path = "/api-keys", tag = "api-keys", params(PageParams),
    description = "Signed-in administrators only (Bearer session); API keys get 403.",
    security(("session" = [])),
    responses(
        (status = 200, body = ApiKeyList),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
    ))]
pub async fn list_api_keys(
    State(app): State<AppState>,
    principal: Principal,
    Query(page): Query<PageParams>,
) -> Result<axum::Json<ApiKeyList>, ApiError> {
    Ok(axum::Json(api_keys::list(&app, &principal, page).await?))
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
    State(app): State<AppState>,
    principal: Principal,
    Json(body): Json<CreateApiKeyRequest>,
) -> Result<(StatusCode, axum::Json<ApiKeyWithSecret>), ApiError> {
    let key = api_keys::create(&app, &principal, body).await?;
    Ok((StatusCode::CREATED, axum::Json(key)))
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
    State(app): State<AppState>,
    principal: Principal,
    PathId(id): PathId,
) -> Result<axum::Json<ApiKeyWithSecret>, ApiError> {
    Ok(axum::Json(api_keys::rotate(&app, &principal, id).await?))
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
    State(app): State<AppState>,
    principal: Principal,
    PathId(id): PathId,
) -> Result<StatusCode, ApiError> {
    api_keys::delete(&app, &principal, id).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// Routes of this module.
pub fn routes() -> Routes {
    Routes::new()
        .routes(utoipa_axum::routes!(list_api_keys, create_api_key))
        .routes(utoipa_axum::routes!(rotate_api_key))
        .routes(utoipa_axum::routes!(delete_api_key))
}
