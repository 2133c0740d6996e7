//! Webhook endpoints, their delivery attempts, and the event catalogue (SPEC §4.9, §6).

use axum::extract::State;
use axum::http::StatusCode;
use mailward_api_types::webhooks::{
    CreateWebhookEndpointRequest, UpdateWebhookEndpointRequest, WebhookDeliveryList,
    WebhookEndpoint, WebhookEndpointList, WebhookEndpointWithSecret, WebhookEventList,
};
use mailward_api_types::{ErrorBody, PageParams};
use mailward_http::extract::{Json, PathId, Query};
use mailward_http::{ApiError, AppState, Principal, Routes};
use mailward_services::webhooks::endpoints;

/// The event catalogue.
#[utoipa::path(get, path = "/webhook-events", tag = "webhooks",
    description = "Every event type with when it fires and the resource in `data.object`. Public. \
Names are additive: treat an unknown type as unspecified.",
    responses((status = 200, body = WebhookEventList)))]
pub async fn list_webhook_events() -> axum::Json<WebhookEventList> {
    axum::Json(endpoints::event_catalogue())
}

/// Lists the organization's endpoints.
#[utoipa::path(get, path = "/webhook-endpoints", tag = "webhooks", params(PageParams),
    description = "Every endpoint of the organization, oldest first. A caller who may not manage endpoints (anyone but administrators not limited to groups and read-write keys) sees each `url` masked to its scheme, host and port, as `https://hooks.example/...`: receivers' URLs often carry credentials in their userinfo, path or query.",
    security(("api_key" = []), ("session" = [])),
    responses((status = 200, body = WebhookEndpointList), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody)))]
pub async fn list_webhook_endpoints(
    State(app): State<AppState>,
    principal: Principal,
    Query(page): Query<PageParams>,
) -> Result<axum::Json<WebhookEndpointList>, ApiError> {
    Ok(axum::Json(endpoints::list(&app, &principal, page).await?))
}

/// Registers an endpoint; the response carries the signing secret once.
#[utoipa::path(post, path = "/webhook-endpoints", tag = "webhooks", request_body = CreateWebhookEndpointRequest,
    description = "Administrators or read-write keys. `url` must be https and must not point at a \
private, loopback, link-local or metadata address (checked again at every delivery, at connect \
time). An unknown name in `enabled_events` answers 400 with `param` `enabled_events`, the names in \
the message and in `details.unknown_events`. The endpoint's `api_version` is the request's version.\n\n\
Deliveries: `POST` of the envelope `{id, type, api_version, created, data: {object, \
previous_attributes?, record?}}` with `Mailward-Signature: t=<unix>,v1=<hex HMAC-SHA256 of \
\"<t>.<raw body>\">`, `Mailward-Event-Id` and `Mailward-Delivery-Attempt`. 2xx within 10 s is \
success; 5xx, 408, 429, timeouts and connection errors are retried with exponential backoff (30 s \
doubling to 6 h, ±20 % jitter, at least `Retry-After`), up to 12 attempts; other 4xx and redirects \
are final. Each failed attempt counts toward the endpoint's consecutive-failure counter across \
events; the 20th turns it `AUTO_DISABLED` until it is updated back to `ENABLED`.",
    security(("api_key" = []), ("session" = [])),
    responses((status = 201, body = WebhookEndpointWithSecret), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody)))]
pub async fn create_webhook_endpoint(
    State(app): State<AppState>,
    principal: Principal,
    Json(body): Json<CreateWebhookEndpointRequest>,
) -> Result<(StatusCode, axum::Json<WebhookEndpointWithSecret>), ApiError> {
    let created = endpoints::create(&app, &principal, body).await?;
    Ok((StatusCode::CREATED, axum::Json(created)))
}

/// One endpoint.
#[utoipa::path(get, path = "/webhook-endpoints/{id}", tag = "webhooks",
    params(("id" = uuid::Uuid, Path, description = "Endpoint id")),
    description = "One endpoint. A caller who may not manage endpoints (anyone but administrators not limited to groups and read-write keys) sees each `url` masked to its scheme, host and port, as `https://hooks.example/...`: receivers' URLs often carry credentials in their userinfo, path or query.",
    security(("api_key" = []), ("session" = [])),
    responses((status = 200, body = WebhookEndpoint), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn get_webhook_endpoint(
    State(app): State<AppState>,
    principal: Principal,
    PathId(id): PathId,
) -> Result<axum::Json<WebhookEndpoint>, ApiError> {
    Ok(axum::Json(endpoints::get(&app, &principal, id).await?))
}

/// Updates an endpoint.
#[utoipa::path(post, path = "/webhook-endpoints/{id}", tag = "webhooks", request_body = UpdateWebhookEndpointRequest,
    params(("id" = uuid::Uuid, Path, description = "Endpoint id")),
    description = "Administrators or read-write keys. Setting `status` to `ENABLED` re-enables a \
`DISABLED` or `AUTO_DISABLED` endpoint and clears its failure counter; it receives the events that \
occur from then on, not those of the time it was disabled. A concurrent update answers 409.",
    security(("api_key" = []), ("session" = [])),
    responses((status = 200, body = WebhookEndpoint), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody), (status = 409, body = ErrorBody)))]
pub async fn update_webhook_endpoint(
    State(app): State<AppState>,
    principal: Principal,
    PathId(id): PathId,
    Json(body): Json<UpdateWebhookEndpointRequest>,
) -> Result<axum::Json<WebhookEndpoint>, ApiError> {
    Ok(axum::Json(
        endpoints::update(&app, &principal, id, body).await?,
    ))
}

/// Deletes an endpoint; its delivery records stay readable for 30 days.
#[utoipa::path(delete, path = "/webhook-endpoints/{id}", tag = "webhooks",
    params(("id" = uuid::Uuid, Path, description = "Endpoint id")),
    security(("api_key" = []), ("session" = [])),
    responses((status = 204, description = "Deleted"), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn delete_webhook_endpoint(
    State(app): State<AppState>,
    principal: Principal,
    PathId(id): PathId,
) -> Result<StatusCode, ApiError> {
    endpoints::delete(&app, &principal, id).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// Replaces the signing secret; the old one stops signing at once.
#[utoipa::path(post, path = "/webhook-endpoints/{id}/rotate-secret", tag = "webhooks",
    params(("id" = uuid::Uuid, Path, description = "Endpoint id")),
    description = "Administrators or read-write keys. The new secret is shown once; every delivery \
attempt from now on (retries of earlier events included) is signed with it.",
    security(("api_key" = []), ("session" = [])),
    responses((status = 200, body = WebhookEndpointWithSecret), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody), (status = 409, body = ErrorBody)))]
pub async fn rotate_webhook_secret(
    State(app): State<AppState>,
    principal: Principal,
    PathId(id): PathId,
) -> Result<axum::Json<WebhookEndpointWithSecret>, ApiError> {
    Ok(axum::Json(
        endpoints::rotate_secret(&app, &principal, id).await?,
    ))
}

/// Delivery attempts of an endpoint, newest first (30 days; still readable after deletion).
#[utoipa::path(get, path = "/webhook-endpoints/{id}/deliveries", tag = "webhooks", params(("id" = uuid::Uuid, Path, description = "Endpoint id"), PageParams),
    description = "Every attempt of the last 30 days: event, attempt number, `succeeded`|`failed`, \
the receiver's status, the error, the duration and the next retry time. Works for 30 days after \
the endpoint was deleted; an id of no endpoint of this organization (never created, or deleted \
more than 30 days ago) answers 404. A caller who may not manage endpoints sees each attempt's \
`url` masked as on `GET /webhook-endpoints`.",
    security(("api_key" = []), ("session" = [])),
    responses((status = 200, body = WebhookDeliveryList), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn list_webhook_deliveries(
    State(app): State<AppState>,
    principal: Principal,
    PathId(id): PathId,
    Query(page): Query<PageParams>,
) -> Result<axum::Json<WebhookDeliveryList>, ApiError> {
    Ok(axum::Json(
        endpoints::deliveries(&app, &principal, id, page).await?,
    ))
}

/// Routes of this module.
pub fn routes() -> Routes {
    Routes::new()
        .routes(utoipa_axum::routes!(list_webhook_events))
        .routes(utoipa_axum::routes!(
            list_webhook_endpoints,
            create_webhook_endpoint
        ))
        .routes(utoipa_axum::routes!(
            get_webhook_endpoint,
            update_webhook_endpoint,
            delete_webhook_endpoint
        ))
        .routes(utoipa_axum::routes!(rotate_webhook_secret))
        .routes(utoipa_axum::routes!(list_webhook_deliveries))
}
