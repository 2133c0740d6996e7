//! Webhooks (SPEC §2.12, §4.9, §6): endpoints, delivery attempts, the event catalogue and the
//! bodies that create and change endpoints.

use crate::common::{PageInfo, double_option};
use mailward_domain::webhooks::{self as model, AttemptStatus, EndpointStatus};
use serde::{Deserialize, Serialize};
use time::OffsetDateTime;
use utoipa::ToSchema;
use uuid::Uuid;

/// Webhook endpoint status.
#[derive(Debug, Serialize, Deserialize, ToSchema, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum WebhookStatusView {
    Enabled,
    Disabled,
    AutoDisabled,
}

impl From<EndpointStatus> for WebhookStatusView {
    fn from(s: EndpointStatus) -> Self {
        use EndpointStatus as S;
        match s {
            S::Enabled => Self::Enabled,
            S::Disabled => Self::Disabled,
            S::AutoDisabled => Self::AutoDisabled,
        }
    }
}

/// A webhook endpoint (SPEC §2.12). The signing secret itself appears only in
/// [`WebhookEndpointWithSecret`].
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct WebhookEndpoint {
    pub id: Uuid,
    /// HTTPS URL receiving the POSTs.
    pub url: String,
    pub description: Option<String>,
    /// Subscribed event types; empty means every event, including future ones.
    pub enabled_events: Vec<String>,
    pub status: WebhookStatusView,
    /// Last four characters of the signing secret.
    pub secret_last_four: String,
    /// Payload version pinned at creation.
    pub api_version: String,
    #[serde(with = "time::serde::rfc3339")]
    pub created_at: OffsetDateTime,
    #[serde(with = "time::serde::rfc3339")]
    pub updated_at: OffsetDateTime,
}

impl From<&model::WebhookEndpoint> for WebhookEndpoint {
    fn from(e: &model::WebhookEndpoint) -> Self {
        Self {
            id: e.id,
            url: e.url.clone(),
            description: e.description.clone(),
            enabled_events: e.enabled_events.clone(),
            status: e.status.into(),
            secret_last_four: e.secret_last_four.clone(),
            api_version: e.api_version.clone(),
            created_at: e.created_at,
            updated_at: e.updated_at,
        }
    }
}

/// An endpoint with its full signing secret: returned only by creation and rotation.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct WebhookEndpointWithSecret {
    #[serde(flatten)]
    pub endpoint: WebhookEndpoint,
    /// The signing secret. Shown only now; verify `Mailward-Signature` with it.
    pub secret: String,
}

/// A page of endpoints.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct WebhookEndpointList {
    pub data: Vec<WebhookEndpoint>,
    pub page_info: PageInfo,
}

/// One delivery attempt (kept 30 days, readable after the endpoint is deleted).
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct WebhookDelivery {
    pub id: Uuid,
    pub endpoint_id: Uuid,
    /// The event's id (stable across retries).
    pub event_id: String,
    pub event_type: String,
    /// 1 for the first attempt of the event.
    pub attempt: u32,
    /// `succeeded` (2xx) or `failed`.
    pub status: String,
    /// The receiver's HTTP status; null when no response arrived.
    pub response_status: Option<u16>,
    /// Why it failed (timeout, connection error, HTTP status, refused address); null on success.
    pub error: Option<String>,
    pub duration_ms: u64,
    pub url: String,
    /// When the next attempt is due; null when none is scheduled.
    #[serde(with = "time::serde::rfc3339::option")]
    pub next_retry_at: Option<OffsetDateTime>,
    #[serde(with = "time::serde::rfc3339")]
    pub created_at: OffsetDateTime,
}

impl From<&model::DeliveryAttempt> for WebhookDelivery {
    fn from(a: &model::DeliveryAttempt) -> Self {
        Self {
            id: a.id,
            endpoint_id: a.endpoint_id,
            event_id: a.event_id.clone(),
            event_type: a.event_type.clone(),
            attempt: a.attempt,
            status: match a.status {
                AttemptStatus::Succeeded => "succeeded".into(),
                AttemptStatus::Failed => "failed".into(),
            },
            response_status: a.response_status,
            error: a.error.clone(),
            duration_ms: a.duration_ms,
            url: a.url.clone(),
            next_retry_at: a.next_retry_at,
            created_at: a.created_at,
        }
    }
}

/// A page of delivery attempts, newest first.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct WebhookDeliveryList {
    pub data: Vec<WebhookDelivery>,
    pub page_info: PageInfo,
}

/// One entry of the event catalogue.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct WebhookEventType {
    /// Event name.
    #[serde(rename = "type")]
    pub event_type: String,
    /// When it fires.
    pub description: String,
    /// The resource kind in `data.object`.
    pub object: String,
}

/// The event catalogue.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct WebhookEventList {
    pub data: Vec<WebhookEventType>,
}

/// `POST /webhook-endpoints` body.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateWebhookEndpointRequest {
    /// HTTPS URL. Private, loopback, link-local and metadata addresses are refused.
    #[schema(value_type = crate::constraints::HttpsUrl)]
    pub url: String,
    /// Up to 500 characters.
    #[schema(max_length = 500)]
    pub description: Option<String>,
    /// Event types from `GET /webhook-events`; omitted or empty means every event.
    #[serde(default)]
    #[schema(value_type = Vec<EventName>)]
    pub enabled_events: Vec<String>,
}

crate::words!(
    /// An event type of the catalogue (`GET /webhook-events`).
    pub EventName = mailward_domain::events::CATALOGUE.iter().map(|e| e.name)
);

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
    /// HTTPS URL, as on creation.
    #[schema(value_type = Option<crate::constraints::HttpsUrl>)]
    pub url: Option<String>,
    #[serde(default, deserialize_with = "double_option")]
    #[schema(value_type = Option<String>, nullable, max_length = 500)]
    pub description: Option<Option<String>>,
    /// Event types from `GET /webhook-events`; empty means every event.
    #[schema(value_type = Option<Vec<EventName>>)]
    pub enabled_events: Option<Vec<String>>,
    /// `ENABLED` or `DISABLED`; `AUTO_DISABLED` is set only by the service.
    pub status: Option<SettableStatus>,
}
