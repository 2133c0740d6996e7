//! Hosted DKIM keys: `/domains/{id}/dkim-keys*` (SPEC §2.7, §4.1).

use axum::extract::{Path, State};
use axum::http::StatusCode;
use mailward_api_types::ErrorBody;
use mailward_api_types::dkim_keys::{DkimKey, DkimKeyRequest, ListDkimKeysParams};
use mailward_http::extract::{Json, PathId, Query, path_uuid};
use mailward_http::{ApiError, AppState, Principal, Routes};
use mailward_services::domains::hosting::dkim_keys;

/// Lists a domain's hosted DKIM keys.
#[utoipa::path(get, path = "/domains/{id}/dkim-keys", tag = "domains",
    params(("id" = uuid::Uuid, Path, description = "Domain id"), ListDkimKeysParams),
    description = "The domain's hosted DKIM keys, oldest first, deleted ones left out (read a \
deleted key by its id). `dns_status` filters: unknown, syncing (served by Mailward; the \
customer's `<selector>._domainkey.<domain>` CNAME to `cname_target` not seen in live DNS yet), \
ready, error (`publish_error` says why; the hourly reconciliation retries). A plain array.",
    security(("api_key" = []), ("session" = [])),
    responses((status = 200, body = Vec<DkimKey>), (status = 400, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn list_dkim_keys(
    State(app): State<AppState>,
    principal: Principal,
    PathId(id): PathId,
    Query(params): Query<ListDkimKeysParams>,
) -> Result<axum::Json<Vec<DkimKey>>, ApiError> {
    Ok(axum::Json(
        dkim_keys::list(&app, &principal, id, &params).await?,
    ))
}

/// Registers a DKIM key Mailward serves.
#[utoipa::path(post, path = "/domains/{id}/dkim-keys", tag = "domains",
    params(("id" = uuid::Uuid, Path, description = "Domain id")),
    request_body = DkimKeyRequest,
    description = "Editors, administrators or read-write keys. `selector` DNS labels; \
`record_type` TXT (then `value` is the key record and must hold a usable key: `v=DKIM1; k=rsa; \
p=…`, RSA of at least 1024 bits or Ed25519) or CNAME (then `value` is the sending service's key \
host); `ttl` 1-86400 (default 3600). Mailward serves the record at `cname_target` at once; the \
customer publishes `<selector>._domainkey.<domain>` as a CNAME to it. 409 `dkim_key_exists` when \
a live key already uses the selector. When the zone refuses the record the key is still created, \
with `dns_status` error and `publish_error`.",
    security(("api_key" = []), ("session" = [])),
    responses((status = 201, body = DkimKey), (status = 400, body = ErrorBody), (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody), (status = 409, body = ErrorBody)))]
pub async fn create_dkim_key(
    State(app): State<AppState>,
    principal: Principal,
    PathId(id): PathId,
    Json(body): Json<DkimKeyRequest>,
) -> Result<(StatusCode, axum::Json<DkimKey>), ApiError> {
    let key = dkim_keys::create(&app, &principal, id, body).await?;
    Ok((StatusCode::CREATED, axum::Json(key)))
}

/// One hosted DKIM key.
#[utoipa::path(get, path = "/domains/{id}/dkim-keys/{key_id}", tag = "domains",
    params(("id" = uuid::Uuid, Path, description = "Domain id"),
        ("key_id" = uuid::Uuid, Path, description = "DKIM key id")),
    description = "The key, deleted or not (`deleted_at`).",
    security(("api_key" = []), ("session" = [])),
    responses((status = 200, body = DkimKey), (status = 400, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn get_dkim_key(
    State(app): State<AppState>,
    principal: Principal,
    Path((domain_raw, key_raw)): Path<(String, String)>,
) -> Result<axum::Json<DkimKey>, ApiError> {
    let id = path_uuid(&domain_raw, "id")?;
    let key = path_uuid(&key_raw, "key_id")?;
    Ok(axum::Json(dkim_keys::get(&app, &principal, id, key).await?))
}

/// Replaces a hosted DKIM key.
#[utoipa::path(post, path = "/domains/{id}/dkim-keys/{key_id}", tag = "domains",
    params(("id" = uuid::Uuid, Path, description = "Domain id"),
        ("key_id" = uuid::Uuid, Path, description = "DKIM key id")),
    request_body = DkimKeyRequest,
    description = "Editors, administrators or read-write keys. The same body and checks as \
creation; the record is served again (a changed selector or type stops serving the old one). \
404 for a deleted key.",
    security(("api_key" = []), ("session" = [])),
    responses((status = 200, body = DkimKey), (status = 400, body = ErrorBody), (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody), (status = 409, body = ErrorBody)))]
pub async fn update_dkim_key(
    State(app): State<AppState>,
    principal: Principal,
    Path((domain_raw, key_raw)): Path<(String, String)>,
    Json(body): Json<DkimKeyRequest>,
) -> Result<axum::Json<DkimKey>, ApiError> {
    let id = path_uuid(&domain_raw, "id")?;
    let key = path_uuid(&key_raw, "key_id")?;
    Ok(axum::Json(
        dkim_keys::update(&app, &principal, id, key, body).await?,
    ))
}

/// Deletes a hosted DKIM key.
#[utoipa::path(delete, path = "/domains/{id}/dkim-keys/{key_id}", tag = "domains",
    params(("id" = uuid::Uuid, Path, description = "Domain id"),
        ("key_id" = uuid::Uuid, Path, description = "DKIM key id")),
    description = "Editors, administrators or read-write keys. Soft delete: `deleted_at` is set, \
Mailward stops serving the record, and the key stays readable by id. 204 with no body.",
    security(("api_key" = []), ("session" = [])),
    responses((status = 204, description = "Deleted"), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn delete_dkim_key(
    State(app): State<AppState>,
    principal: Principal,
    Path((domain_raw, key_raw)): Path<(String, String)>,
) -> Result<StatusCode, ApiError> {
    let id = path_uuid(&domain_raw, "id")?;
    let key = path_uuid(&key_raw, "key_id")?;
    dkim_keys::delete(&app, &principal, id, key).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// Routes of this module.
pub fn routes() -> Routes {
    Routes::new()
        .routes(utoipa_axum::routes!(list_dkim_keys, create_dkim_key))
        .routes(utoipa_axum::routes!(
            get_dkim_key,
            update_dkim_key,
            delete_dkim_key
        ))
}
