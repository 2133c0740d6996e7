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
    /// When the endpoint last became `ENABLED` (creation or re-enabling); it receives the events
    /// that occurred from then on. Absent on endpoints written before it existed: `created_at`.
    #[serde(default, with = "time::serde::rfc3339::option")]
    pub enabled_since: Option<OffsetDateTime>,
    #[serde(with = "time::serde::rfc3339")]
    pub created_at: OffsetDateTime,
    #[serde(with = "time::serde::rfc3339")]
    pub updated_at: OffsetDateTime,
}

impl WebhookEndpoint {
    /// Whether an event that occurred at `event_created` is for this endpoint: it is enabled and
    /// was already enabled when the event occurred (an event of the time it was disabled is not
    /// delivered once it is enabled again).
    pub fn receives_at(&self, event_created: OffsetDateTime) -> bool {
        self.status == EndpointStatus::Enabled
            && self.enabled_since.unwrap_or(self.created_at) <= event_created
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use time::macros::datetime;

    fn endpoint(status: EndpointStatus, since: Option<OffsetDateTime>) -> WebhookEndpoint {
        WebhookEndpoint {
            id: Uuid::nil(),
            org_id: Uuid::nil(),
            url: "https://hooks.example.com/".into(),
            description: None,
            enabled_events: vec![],
            status,
            sealed_secret: String::new(),
            secret_last_four: String::new(),
            api_version: String::new(),
            consecutive_failures: 0,
            enabled_since: since,
            created_at: datetime!(2026-01-01 00:00 UTC),
            updated_at: datetime!(2026-01-01 00:00 UTC),
        }
    }

    #[test]
    fn an_endpoint_receives_what_occurred_while_it_was_enabled() {
        let before = datetime!(2026-03-01 11:59 UTC);
        let since = datetime!(2026-03-01 12:00 UTC);
        let after = datetime!(2026-03-01 12:01 UTC);
        let e = endpoint(EndpointStatus::Enabled, Some(since));
        assert!(!e.receives_at(before), "occurred while it was disabled");
        assert!(e.receives_at(since) && e.receives_at(after));
        assert!(!endpoint(EndpointStatus::AutoDisabled, Some(since)).receives_at(after));
        assert!(!endpoint(EndpointStatus::Disabled, Some(since)).receives_at(after));
        // Written before the field existed: enabled since its creation.
        let old = endpoint(EndpointStatus::Enabled, None);
        assert!(old.receives_at(before));
        assert!(!old.receives_at(datetime!(2025-12-31 23:59 UTC)));
    }
}
