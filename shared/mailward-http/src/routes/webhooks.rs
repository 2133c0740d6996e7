//! Webhook endpoints, their delivery attempts, and the event catalogue (SPEC §4.9, §6).

use crate::auth::Principal;
use crate::error::ApiError;
use crate::extract::{Json, PathId, Query};
use crate::pagination::PageParams;
use crate::repo::webhooks::{self, EndpointStatus, WebhookEndpoint};
use crate::secret_box;
use crate::state::AppState;
use crate::views::{
    self, ErrorBody, WebhookDeliveryList, WebhookEndpointList, WebhookEndpointWithSecret,
    WebhookEventList, WebhookEventType,
};
use crate::webhooks::client::check_url;
use axum::extract::State;
use axum::http::StatusCode;
use mailward_domain::events::{CATALOGUE, lookup};
use mailward_domain::secrets::new_webhook_secret;
use serde::Deserialize;
use serde_json::json;
use utoipa::ToSchema;
use uuid::Uuid;

/// `POST /webhook-endpoints` body.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateWebhookEndpointRequest {
    /// HTTPS URL. Private, loopback, link-local and metadata addresses are refused.
    #[schema(format = "uri")]
    pub url: String,
    /// Up to 500 characters.
    #[schema(max_length = 500)]
    pub description: Option<String>,
    /// Event types from `GET /webhook-events`; omitted or empty means every event.
    #[serde(default)]
    pub enabled_events: Vec<String>,
}

/// Endpoint status a person may set.
#[derive(Debug, Deserialize, ToSchema, Clone, Copy)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum SettableStatus {
    /// Receive events again (clears the failure counter).
    Enabled,
    /// Stop receiving events.
    Disabled,
}

/// `POST /webhook-endpoints/{id}` body: any subset.
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateWebhookEndpointRequest {
    #[schema(format = "uri")]
    pub url: Option<String>,
    #[serde(default, deserialize_with = "crate::extract::double_option")]
    #[schema(value_type = Option<String>, nullable, max_length = 500)]
    pub description: Option<Option<String>>,
    pub enabled_events: Option<Vec<String>>,
    /// `ENABLED` or `DISABLED`; `AUTO_DISABLED` is set only by the service.
    pub status: Option<SettableStatus>,
}

fn validate_url(state: &AppState, raw: &str) -> Result<String, ApiError> {
    check_url(raw.trim(), state.config.outbound.allow_loopback)
        .map(|u| u.to_string())
        .map_err(|m| ApiError::invalid_param("url", format!("url: {m}")))
}

fn validate_description(raw: Option<String>) -> Result<Option<String>, ApiError> {
    match raw {
        Some(d) if d.chars().count() > 500 => Err(ApiError::invalid_param(
            "description",
            "description must be at most 500 characters",
        )),
        Some(d) if d.trim().is_empty() => Ok(None),
        other => Ok(other),
    }
}

/// Every name must be in the catalogue; the offending names are listed.
fn validate_events(raw: Vec<String>) -> Result<Vec<String>, ApiError> {
    let unknown: Vec<&String> = raw.iter().filter(|e| lookup(e).is_none()).collect();
    if !unknown.is_empty() {
        let names: Vec<&str> = unknown.iter().map(|s| s.as_str()).collect();
        return Err(ApiError::invalid_param(
            "enabled_events",
            format!(
                "unknown event type {}; see GET /webhook-events",
                names.join(", ")
            ),
        )
        .details(json!({ "unknown_events": names })));
    }
    let mut events = raw;
    events.sort();
    events.dedup();
    Ok(events)
}

async fn load(
    state: &AppState,
    principal: &Principal,
    id: Uuid,
) -> Result<crate::repo::Versioned<WebhookEndpoint>, ApiError> {
    webhooks::get(state.store.as_ref(), principal.org_id, id)
        .await?
        .ok_or_else(|| ApiError::not_found("webhook endpoint"))
}

/// The event catalogue.
#[utoipa::path(get, path = "/webhook-events", tag = "webhooks",
    description = "Every event type with when it fires and the resource in `data.object`. Public. \
Names are additive: treat an unknown type as unspecified.",
    responses((status = 200, body = WebhookEventList)))]
pub async fn list_webhook_events() -> axum::Json<WebhookEventList> {
    axum::Json(WebhookEventList {
        data: CATALOGUE
            .iter()
            .map(|e| WebhookEventType {
                event_type: e.name.into(),
                description: e.description.into(),
                object: e.object.into(),
            })
            .collect(),
    })
}

/// Lists the organization's endpoints.
#[utoipa::path(get, path = "/webhook-endpoints", tag = "webhooks", params(PageParams),
    security(("api_key" = []), ("session" = [])),
    responses((status = 200, body = WebhookEndpointList), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody)))]
pub async fn list_webhook_endpoints(
    State(state): State<AppState>,
    principal: Principal,
    Query(page): Query<PageParams>,
) -> Result<axum::Json<WebhookEndpointList>, ApiError> {
    let endpoints = webhooks::list(state.store.as_ref(), principal.org_id).await?;
    let (endpoints, page_info) = page.paginate(endpoints)?;
    Ok(axum::Json(WebhookEndpointList {
        data: endpoints.iter().map(views::WebhookEndpoint::from).collect(),
        page_info,
    }))
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
    State(state): State<AppState>,
    principal: Principal,
    Json(body): Json<CreateWebhookEndpointRequest>,
) -> Result<(StatusCode, axum::Json<WebhookEndpointWithSecret>), ApiError> {
    principal.require_admin()?;
    let url = validate_url(&state, &body.url)?;
    let description = validate_description(body.description)?;
    let enabled_events = validate_events(body.enabled_events)?;
    let secret = new_webhook_secret();
    let now = state.clock.now();
    let endpoint = WebhookEndpoint {
        id: Uuid::new_v4(),
        org_id: principal.org_id,
        url,
        description,
        enabled_events,
        status: EndpointStatus::Enabled,
        sealed_secret: secret_box::seal(&state.config.secret_key, &secret)
            .map_err(ApiError::internal)?,
        secret_last_four: crate::repo::api_keys::last_four(&secret),
        api_version: principal.version.as_str().into(),
        consecutive_failures: 0,
        created_at: now,
        updated_at: now,
    };
    webhooks::create(state.store.as_ref(), &endpoint).await?;
    Ok((
        StatusCode::CREATED,
        axum::Json(WebhookEndpointWithSecret {
            endpoint: views::WebhookEndpoint::from(&endpoint),
            secret,
        }),
    ))
}

/// One endpoint.
#[utoipa::path(get, path = "/webhook-endpoints/{id}", tag = "webhooks",
    params(("id" = uuid::Uuid, Path, description = "Endpoint id")),
    security(("api_key" = []), ("session" = [])),
    responses((status = 200, body = views::WebhookEndpoint), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn get_webhook_endpoint(
    State(state): State<AppState>,
    principal: Principal,
    PathId(id): PathId,
) -> Result<axum::Json<views::WebhookEndpoint>, ApiError> {
    let endpoint = load(&state, &principal, id).await?;
    Ok(axum::Json(views::WebhookEndpoint::from(&endpoint.value)))
}

/// Updates an endpoint.
#[utoipa::path(post, path = "/webhook-endpoints/{id}", tag = "webhooks", request_body = UpdateWebhookEndpointRequest,
    params(("id" = uuid::Uuid, Path, description = "Endpoint id")),
    description = "Administrators or read-write keys. Setting `status` to `ENABLED` re-enables a \
`DISABLED` or `AUTO_DISABLED` endpoint and clears its failure counter. A concurrent update answers 409.",
    security(("api_key" = []), ("session" = [])),
    responses((status = 200, body = views::WebhookEndpoint), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody), (status = 409, body = ErrorBody)))]
pub async fn update_webhook_endpoint(
    State(state): State<AppState>,
    principal: Principal,
    PathId(id): PathId,
    Json(body): Json<UpdateWebhookEndpointRequest>,
) -> Result<axum::Json<views::WebhookEndpoint>, ApiError> {
    principal.require_admin()?;
    let current = load(&state, &principal, id).await?;
    let mut endpoint = current.value.clone();
    if let Some(url) = &body.url {
        endpoint.url = validate_url(&state, url)?;
    }
    if let Some(description) = body.description {
        endpoint.description = validate_description(description)?;
    }
    if let Some(events) = body.enabled_events {
        endpoint.enabled_events = validate_events(events)?;
    }
    match body.status {
        Some(SettableStatus::Enabled) => {
            endpoint.status = EndpointStatus::Enabled;
            endpoint.consecutive_failures = 0;
        }
        Some(SettableStatus::Disabled) => endpoint.status = EndpointStatus::Disabled,
        None => {}
    }
    if endpoint != current.value {
        endpoint.updated_at = state.clock.now();
        webhooks::save(state.store.as_ref(), &endpoint, current.version).await?;
    }
    Ok(axum::Json(views::WebhookEndpoint::from(&endpoint)))
}

/// Deletes an endpoint; its delivery records stay readable for 30 days.
#[utoipa::path(delete, path = "/webhook-endpoints/{id}", tag = "webhooks",
    params(("id" = uuid::Uuid, Path, description = "Endpoint id")),
    security(("api_key" = []), ("session" = [])),
    responses((status = 204, description = "Deleted"), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn delete_webhook_endpoint(
    State(state): State<AppState>,
    principal: Principal,
    PathId(id): PathId,
) -> Result<StatusCode, ApiError> {
    principal.require_admin()?;
    if !webhooks::delete(state.store.as_ref(), principal.org_id, id).await? {
        return Err(ApiError::not_found("webhook endpoint"));
    }
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
    State(state): State<AppState>,
    principal: Principal,
    PathId(id): PathId,
) -> Result<axum::Json<WebhookEndpointWithSecret>, ApiError> {
    principal.require_admin()?;
    let current = load(&state, &principal, id).await?;
    let mut endpoint = current.value;
    let secret = new_webhook_secret();
    endpoint.sealed_secret =
        secret_box::seal(&state.config.secret_key, &secret).map_err(ApiError::internal)?;
    endpoint.secret_last_four = crate::repo::api_keys::last_four(&secret);
    endpoint.updated_at = state.clock.now();
    webhooks::save(state.store.as_ref(), &endpoint, current.version).await?;
    Ok(axum::Json(WebhookEndpointWithSecret {
        endpoint: views::WebhookEndpoint::from(&endpoint),
        secret,
    }))
}

/// Delivery attempts of an endpoint, newest first (30 days; still readable after deletion).
#[utoipa::path(get, path = "/webhook-endpoints/{id}/deliveries", tag = "webhooks", params(("id" = uuid::Uuid, Path, description = "Endpoint id"), PageParams),
    description = "Every attempt of the last 30 days: event, attempt number, `succeeded`|`failed`, \
the receiver's status, the error, the duration and the next retry time. Works after the endpoint \
was deleted; an id that never had attempts in this organization answers an empty list.",
    security(("api_key" = []), ("session" = [])),
    responses((status = 200, body = WebhookDeliveryList), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody)))]
pub async fn list_webhook_deliveries(
    State(state): State<AppState>,
    principal: Principal,
    PathId(id): PathId,
    Query(page): Query<PageParams>,
) -> Result<axum::Json<WebhookDeliveryList>, ApiError> {
    let attempts = webhooks::list_attempts(state.store.as_ref(), principal.org_id, id).await?;
    let (attempts, page_info) = page.paginate(attempts)?;
    Ok(axum::Json(WebhookDeliveryList {
        data: attempts.iter().map(views::WebhookDelivery::from).collect(),
        page_info,
    }))
}

/// Routes of this module.
pub fn routes() -> utoipa_axum::router::OpenApiRouter<AppState> {
    utoipa_axum::router::OpenApiRouter::new()
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
