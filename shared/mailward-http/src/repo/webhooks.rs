//! Webhook endpoints (in the organization's partition) and delivery attempt records (also in the
//! organization's partition, keyed by endpoint, with a 30-day TTL, so they outlive the endpoint).

use super::{Versioned, decode, decode_versioned, encode, keys};
use mailward_domain::store::{Condition, Item, ItemStore, Query, StoreError, query_all};
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

fn endpoint_item(endpoint: &WebhookEndpoint, version: u64) -> Result<Item, StoreError> {
    Ok(Item::new(
        keys::org_pk(endpoint.org_id),
        keys::webhook_sk(endpoint.id),
        encode(endpoint)?,
    )
    .with_version(version))
}

/// Creates an endpoint.
pub async fn create(store: &dyn ItemStore, endpoint: &WebhookEndpoint) -> Result<(), StoreError> {
    store
        .put(endpoint_item(endpoint, 1)?, Condition::NotExists)
        .await
}

/// Saves a changed endpoint if nobody changed it since `read_version`.
pub async fn save(
    store: &dyn ItemStore,
    endpoint: &WebhookEndpoint,
    read_version: u64,
) -> Result<(), StoreError> {
    store
        .put(
            endpoint_item(endpoint, read_version + 1)?,
            Condition::Version(read_version),
        )
        .await
}

/// One endpoint of an organization.
pub async fn get(
    store: &dyn ItemStore,
    org: Uuid,
    id: Uuid,
) -> Result<Option<Versioned<WebhookEndpoint>>, StoreError> {
    store
        .get(&keys::org_pk(org), &keys::webhook_sk(id), true)
        .await?
        .map(|item| decode_versioned(&item))
        .transpose()
}

/// Every endpoint of an organization, oldest first.
pub async fn list(store: &dyn ItemStore, org: Uuid) -> Result<Vec<WebhookEndpoint>, StoreError> {
    let mut endpoints: Vec<WebhookEndpoint> = query_all(
        store,
        Query::partition(keys::org_pk(org)).prefix(keys::WEBHOOK_PREFIX),
    )
    .await?
    .iter()
    .map(decode)
    .collect::<Result<_, _>>()?;
    endpoints.sort_by(|a, b| a.created_at.cmp(&b.created_at).then(a.id.cmp(&b.id)));
    Ok(endpoints)
}

/// Deletes an endpoint (its delivery records stay until their TTL).
pub async fn delete(store: &dyn ItemStore, org: Uuid, id: Uuid) -> Result<bool, StoreError> {
    store
        .delete(&keys::org_pk(org), &keys::webhook_sk(id), Condition::None)
        .await
}

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

/// Records an attempt.
pub async fn record_attempt(
    store: &dyn ItemStore,
    org: Uuid,
    attempt: &DeliveryAttempt,
) -> Result<(), StoreError> {
    let millis = attempt.created_at.unix_timestamp_nanos() / 1_000_000;
    let item = Item::new(
        keys::org_pk(org),
        keys::delivery_sk(attempt.endpoint_id, millis, attempt.id),
        encode(attempt)?,
    )
    .expiring_at(attempt.created_at.unix_timestamp() + DELIVERY_RETENTION_SECS);
    store.put(item, Condition::NotExists).await
}

/// Attempts for an endpoint, newest first.
pub async fn list_attempts(
    store: &dyn ItemStore,
    org: Uuid,
    endpoint: Uuid,
) -> Result<Vec<DeliveryAttempt>, StoreError> {
    query_all(
        store,
        Query::partition(keys::org_pk(org))
            .prefix(keys::delivery_prefix(endpoint))
            .descending(),
    )
    .await?
    .iter()
    .map(decode)
    .collect()
}
