//! Support tickets and their messages, in the organization's partition: the ticket under
//! `TICKET#<id>` and its messages under `TICKET#<id>#MSG#<unix ms>#<id>`.

use super::{Versioned, decode, decode_versioned, encode, keys};
use mailward_domain::admin::{Ticket, TicketMessage};
use mailward_domain::store::{Condition, Item, ItemStore, Query, StoreError, WriteOp, query_all};
use uuid::Uuid;

/// A ticket's item, indexed (GSI1) in the support queue of its status, oldest change first:
/// what staff work through across organizations.
fn ticket_item(ticket: &Ticket, version: u64) -> Result<Item, StoreError> {
    let millis = ticket.updated_at.unix_timestamp_nanos() / 1_000_000;
    Ok(Item::new(
        keys::org_pk(ticket.org_id),
        keys::ticket_sk(ticket.id),
        encode(ticket)?,
    )
    .with_version(version)
    .with_gsi1(
        keys::support_queue_pk(&ticket.status),
        keys::support_queue_sk(millis, ticket.org_id, ticket.id),
    ))
}

/// One page of the support queue of `status` (`open`, `closed`), oldest change first.
pub async fn queue(
    store: &dyn ItemStore,
    status: &str,
    limit: usize,
    cursor: Option<String>,
) -> Result<(Vec<Ticket>, Option<String>), StoreError> {
    let query = Query::partition(keys::support_queue_pk(status))
        .on(mailward_domain::store::Index::Gsi1)
        .limit(limit)
        .after(cursor);
    let page = store.query(query).await?;
    let tickets = page.items.iter().map(decode).collect::<Result<_, _>>()?;
    Ok((tickets, page.cursor))
}

fn message_item(org: Uuid, message: &TicketMessage, version: u64) -> Result<Item, StoreError> {
    let millis = message.created_at.unix_timestamp_nanos() / 1_000_000;
    Ok(Item::new(
        keys::org_pk(org),
        keys::ticket_message_sk(message.ticket_id, millis, message.id),
        encode(message)?,
    )
    .with_version(version))
}

/// The write that creates a ticket.
pub fn create_op(ticket: &Ticket) -> Result<WriteOp, StoreError> {
    Ok(WriteOp::Put {
        item: ticket_item(ticket, 1)?,
        condition: Condition::NotExists,
    })
}

/// The write that saves a ticket read at `version`.
pub fn save_op(ticket: &Ticket, version: u64) -> Result<WriteOp, StoreError> {
    Ok(WriteOp::Put {
        item: ticket_item(ticket, version + 1)?,
        condition: Condition::Version(version),
    })
}

/// The write that adds a message.
pub fn add_message_op(org: Uuid, message: &TicketMessage) -> Result<WriteOp, StoreError> {
    Ok(WriteOp::Put {
        item: message_item(org, message, 1)?,
        condition: Condition::NotExists,
    })
}

/// The write that saves a message read at `version` (marking it read).
pub fn save_message_op(
    org: Uuid,
    message: &TicketMessage,
    version: u64,
) -> Result<WriteOp, StoreError> {
    Ok(WriteOp::Put {
        item: message_item(org, message, version + 1)?,
        condition: Condition::Version(version),
    })
}

/// One ticket.
pub async fn get(
    store: &dyn ItemStore,
    org: Uuid,
    id: Uuid,
) -> Result<Option<Versioned<Ticket>>, StoreError> {
    store
        .get(&keys::org_pk(org), &keys::ticket_sk(id), true)
        .await?
        .map(|i| decode_versioned(&i))
        .transpose()
}

/// Every ticket and message of an organization: `(tickets, messages)`.
pub async fn list_all(
    store: &dyn ItemStore,
    org: Uuid,
) -> Result<(Vec<Ticket>, Vec<Versioned<TicketMessage>>), StoreError> {
    let items = query_all(
        store,
        Query::partition(keys::org_pk(org)).prefix(keys::TICKET_PREFIX),
    )
    .await?;
    let mut tickets = Vec::new();
    let mut messages = Vec::new();
    for item in &items {
        if item.sk.contains("#MSG#") {
            messages.push(decode_versioned(item)?);
        } else {
            tickets.push(decode(item)?);
        }
    }
    Ok((tickets, messages))
}

/// The messages of one ticket, oldest first.
pub async fn messages(
    store: &dyn ItemStore,
    org: Uuid,
    ticket: Uuid,
) -> Result<Vec<Versioned<TicketMessage>>, StoreError> {
    query_all(
        store,
        Query::partition(keys::org_pk(org)).prefix(keys::ticket_messages_prefix(ticket)),
    )
    .await?
    .iter()
    .map(decode_versioned)
    .collect()
}
