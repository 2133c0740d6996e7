//! Webhook endpoints (in the organization's partition) and delivery attempt records (also in the
//! organization's partition, keyed by endpoint, with a 30-day TTL, so they outlive the endpoint).

use super::{Versioned, decode, decode_versioned, encode, keys};
use mailward_domain::store::{Condition, Item, ItemStore, Query, StoreError, WriteOp, query_all};
use mailward_domain::webhooks::{DELIVERY_RETENTION_SECS, DeliveryAttempt, WebhookEndpoint};
use time::OffsetDateTime;
use uuid::Uuid;

fn endpoint_item(endpoint: &WebhookEndpoint, version: u64) -> Result<Item, StoreError> {
    Ok(Item::new(
        keys::org_pk(endpoint.org_id),
        keys::webhook_sk(endpoint.id),
        encode(endpoint)?,
    )
    .with_version(version))
}

/// The write that creates an endpoint.
pub fn create_op(endpoint: &WebhookEndpoint) -> Result<WriteOp, StoreError> {
    Ok(WriteOp::Put {
        item: endpoint_item(endpoint, 1)?,
        condition: Condition::NotExists,
    })
}

/// The write that saves a changed endpoint read at `read_version`.
pub fn save_op(endpoint: &WebhookEndpoint, read_version: u64) -> Result<WriteOp, StoreError> {
    Ok(WriteOp::Put {
        item: endpoint_item(endpoint, read_version + 1)?,
        condition: Condition::Version(read_version),
    })
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

/// Deletes an endpoint and leaves a tombstone for [`DELIVERY_RETENTION_SECS`], so its delivery
/// records (which stay until their own TTL) can still be listed and an id that never existed
/// can be told apart. Returns false, changing nothing, when no such endpoint exists.
/// `extra` writes (its activity entry) commit with it.
pub async fn delete(
    store: &dyn ItemStore,
    org: Uuid,
    id: Uuid,
    now: OffsetDateTime,
    extra: Vec<WriteOp>,
) -> Result<bool, StoreError> {
    let tombstone = Item::new(
        keys::org_pk(org),
        keys::webhook_tombstone_sk(id),
        Vec::new(),
    )
    .expiring_at(now.unix_timestamp() + DELIVERY_RETENTION_SECS);
    let mut ops = vec![
        WriteOp::Delete {
            pk: keys::org_pk(org),
            sk: keys::webhook_sk(id),
            condition: Condition::Exists,
        },
        WriteOp::Put {
            item: tombstone,
            condition: Condition::None,
        },
    ];
    ops.extend(extra);
    match store.transact(ops).await {
        Ok(()) => Ok(true),
        Err(e) if e.is_conflict() => Ok(false),
        Err(e) => Err(e),
    }
}

/// Whether an endpoint exists, or was deleted within the delivery retention window.
pub async fn known(store: &dyn ItemStore, org: Uuid, id: Uuid) -> Result<bool, StoreError> {
    if store
        .get(&keys::org_pk(org), &keys::webhook_sk(id), false)
        .await?
        .is_some()
    {
        return Ok(true);
    }
    Ok(store
        .get(&keys::org_pk(org), &keys::webhook_tombstone_sk(id), false)
        .await?
        .is_some())
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
