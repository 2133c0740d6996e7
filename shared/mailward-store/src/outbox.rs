//! The outbox: domain events written in the same transaction as the change they describe
//! (DESIGN.md §6). A publisher (DynamoDB Streams on AWS, a poller locally) fans them out.

use super::{decode, encode, keys};
use mailward_domain::alerts::AlertRoute;
use mailward_domain::store::{Condition, Item, ItemStore, Query, StoreError, WriteOp};
use serde::{Deserialize, Serialize};
use time::OffsetDateTime;
use uuid::Uuid;

/// A committed event, before it is wrapped in an endpoint's envelope.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OutboxEvent {
    /// Stable across retries of the event.
    pub id: String,
    /// Event type, e.g. `organization.updated`.
    #[serde(rename = "type")]
    pub event_type: String,
    /// Organization the event belongs to.
    pub org_id: Uuid,
    /// When the change committed.
    #[serde(with = "time::serde::rfc3339")]
    pub created: OffsetDateTime,
    /// The resource in its REST shape.
    pub object: serde_json::Value,
    /// Old values of the changed attributes, for change events.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub previous_attributes: Option<serde_json::Value>,
    /// The hosted record (dmarc, spf, dkim, bimi, mta_sts) of hosted-record events.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub record: Option<String>,
    /// Alert events: the rule's destinations (see [`AlertRoute`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub route: Option<AlertRoute>,
}

impl OutboxEvent {
    /// A new event with a fresh id.
    pub fn new(
        event_type: &str,
        org_id: Uuid,
        created: OffsetDateTime,
        object: serde_json::Value,
        previous_attributes: Option<serde_json::Value>,
    ) -> Self {
        Self {
            id: format!("evt_{}", Uuid::new_v4().simple()),
            event_type: event_type.to_owned(),
            org_id,
            created,
            object,
            previous_attributes,
            record: None,
            route: None,
        }
    }

    /// The write that records this event in the outbox.
    pub fn write_op(&self) -> Result<WriteOp, StoreError> {
        let shard = keys::outbox_shard(&self.id);
        let millis = self.created.unix_timestamp_nanos() / 1_000_000;
        Ok(WriteOp::Put {
            item: Item::new(
                keys::outbox_pk(shard),
                keys::outbox_sk(millis, &self.id),
                encode(self)?,
            ),
            condition: Condition::NotExists,
        })
    }
}

/// A committed event waiting in the outbox, with the key of its row.
#[derive(Debug, Clone, PartialEq)]
pub struct Pending {
    /// The event.
    pub event: OutboxEvent,
    pk: String,
    sk: String,
}

/// Up to `limit` events of one outbox shard, oldest first.
pub async fn pending(
    store: &dyn ItemStore,
    shard: u32,
    limit: usize,
) -> Result<Vec<Pending>, StoreError> {
    let page = store
        .query(Query::partition(keys::outbox_pk(shard)).limit(limit))
        .await?;
    page.items
        .into_iter()
        .map(|item| {
            Ok(Pending {
                event: decode(&item)?,
                pk: item.pk,
                sk: item.sk,
            })
        })
        .collect()
}

/// Removes a published event's row.
pub async fn remove(store: &dyn ItemStore, pending: &Pending) -> Result<(), StoreError> {
    store
        .delete(&pending.pk, &pending.sk, Condition::None)
        .await
        .map(|_| ())
}
