//! Report mailbox connections, in their organization's partition under `MAILBOX#<id>`, and
//! listed across organizations in GSI1 `MAILBOXES` for the poll schedule.

use super::{Versioned, decode_versioned, keys};
use mailward_domain::mailboxes::MailboxConnection;
use mailward_domain::store::{
    Condition, Index, Item, ItemStore, Query, StoreError, WriteOp, query_all,
};
use uuid::Uuid;

/// The item of a connection and its write condition: created when `version` is `None`, else
/// replacing the version read.
fn item(
    connection: &MailboxConnection,
    version: Option<u64>,
) -> Result<(Item, Condition), StoreError> {
    let (item, condition) = super::versioned_item(
        keys::org_pk(connection.org_id),
        keys::mailbox_sk(connection.id),
        connection,
        version,
    )?;
    let item = item.with_gsi1(
        keys::MAILBOXES_INDEX,
        keys::mailbox_index_sk(connection.org_id, connection.id),
    );
    Ok((item, condition))
}

/// The write of a connection, for a transaction (see [`item`]).
pub fn put_op(connection: &MailboxConnection, version: Option<u64>) -> Result<WriteOp, StoreError> {
    let (item, condition) = item(connection, version)?;
    Ok(WriteOp::Put { item, condition })
}

/// Writes a connection (see [`put_op`]).
pub async fn save(
    store: &dyn ItemStore,
    connection: &MailboxConnection,
    version: Option<u64>,
) -> Result<(), StoreError> {
    let (item, condition) = item(connection, version)?;
    store.put(item, condition).await
}

/// The delete of a connection at the version read.
pub fn delete_op(org: Uuid, id: Uuid, version: u64) -> WriteOp {
    WriteOp::Delete {
        pk: keys::org_pk(org),
        sk: keys::mailbox_sk(id),
        condition: Condition::Version(version),
    }
}

/// One connection of an organization.
pub async fn get(
    store: &dyn ItemStore,
    org: Uuid,
    id: Uuid,
) -> Result<Option<Versioned<MailboxConnection>>, StoreError> {
    store
        .get(&keys::org_pk(org), &keys::mailbox_sk(id), true)
        .await?
        .map(|i| decode_versioned(&i))
        .transpose()
}

/// Every connection of an organization, oldest first.
pub async fn list(store: &dyn ItemStore, org: Uuid) -> Result<Vec<MailboxConnection>, StoreError> {
    let mut all: Vec<MailboxConnection> = query_all(
        store,
        Query::partition(keys::org_pk(org)).prefix(keys::MAILBOXES_PREFIX),
    )
    .await?
    .iter()
    .map(|i| decode_versioned(i).map(|v| v.value))
    .collect::<Result<_, _>>()?;
    all.sort_by_key(|c| (c.created_at, c.id));
    Ok(all)
}

/// Every connection of every organization, with its version (the poll schedule).
pub async fn all(store: &dyn ItemStore) -> Result<Vec<Versioned<MailboxConnection>>, StoreError> {
    query_all(
        store,
        Query::partition(keys::MAILBOXES_INDEX).on(Index::Gsi1),
    )
    .await?
    .iter()
    .map(decode_versioned)
    .collect()
}
