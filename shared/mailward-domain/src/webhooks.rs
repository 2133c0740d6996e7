//! Webhook endpoints and delivery attempts as stored (SPEC §2.12, §6.4). The wire shapes are in
//! `mailward-api-types`; the delivery rules in `mailward-services`.

use serde::{Deserialize, Serialize};
use time::OffsetDateTime;
use uuid::Uuid;

/// Endpoint status (SPEC §3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum EndpointStatus {
    /// Receives events.
    Enabled,
    /// Turned off by a person.
    Disabled,
    /// Turned off after 20 consecutive failed deliveries.
    AutoDisabled,
}

/// A stored webhook endpoint.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WebhookEndpoint {
    pub id: Uuid,
    pub org_id: Uuid,
    pub url: String,
    pub description: Option<String>,
    pub enabled_events: Vec<String>,
    pub status: EndpointStatus,
    /// The signing secret, sealed with `secret_box`.
    pub sealed_secret: String,
    pub secret_last_four: String,
    /// API version pinned at creation (payload shape).
    pub api_version: String,
    /// Failed delivery attempts since the last success, across events.
    pub consecutive_failures: u32,
    #[serde(with = "time::serde::rfc3339")]
    pub created_at: OffsetDateTime,
    #[serde(with = "time::serde::rfc3339")]
    pub updated_at: OffsetDateTime,
}

/// Consecutive failed attempts after which an endpoint is auto-disabled (SPEC §6.4).
pub const AUTO_DISABLE_AFTER: u32 = 20;

/// How long attempt records are kept (SPEC §8.2).
pub const DELIVERY_RETENTION_SECS: i64 = 30 * 24 * 3600;

/// Outcome of one attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AttemptStatus {
    /// 2xx.
    Succeeded,
    /// Anything else.
    Failed,
}

/// One delivery attempt, kept 30 days.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DeliveryAttempt {
    pub id: Uuid,
    pub endpoint_id: Uuid,
    pub event_id: String,
    pub event_type: String,
    /// 1 for the first attempt of an event.
    pub attempt: u32,
    pub status: AttemptStatus,
    pub response_status: Option<u16>,
    pub error: Option<String>,
    pub duration_ms: u64,
    pub url: String,
    /// When the next attempt is due, if one is scheduled.
    #[serde(with = "time::serde::rfc3339::option")]
    pub next_retry_at: Option<OffsetDateTime>,
    #[serde(with = "time::serde::rfc3339")]
    pub created_at: OffsetDateTime,
}
