//! DNS connections, in their organization's partition under `DNSCONN#<id>`.

use super::{Versioned, decode_versioned, keys};
use mailward_domain::dns_connections::DnsConnection;
use mailward_domain::store::{Condition, ItemStore, Query, StoreError, query_all};
use uuid::Uuid;

/// Writes a connection: created when `version` is `None`, else replacing the version read.
pub async fn save(
    store: &dyn ItemStore,
    connection: &DnsConnection,
    version: Option<u64>,
) -> Result<(), StoreError> {
    super::put_versioned(
        store,
        keys::org_pk(connection.org_id),
        keys::dns_connection_sk(connection.id),
        connection,
        version,
    )
    .await
}

/// One connection of an organization.
pub async fn get(
    store: &dyn ItemStore,
    org: Uuid,
    id: Uuid,
) -> Result<Option<Versioned<DnsConnection>>, StoreError> {
    store
        .get(&keys::org_pk(org), &keys::dns_connection_sk(id), true)
        .await?
        .map(|i| decode_versioned(&i))
        .transpose()
}

/// Every connection of an organization, oldest first.
pub async fn list(store: &dyn ItemStore, org: Uuid) -> Result<Vec<DnsConnection>, StoreError> {
    let mut all: Vec<DnsConnection> = query_all(
        store,
        Query::partition(keys::org_pk(org)).prefix(keys::DNS_CONNECTIONS_PREFIX),
    )
    .await?
    .iter()
    .map(|i| decode_versioned(i).map(|v| v.value))
    .collect::<Result<_, _>>()?;
    all.sort_by_key(|c| (c.created_at, c.id));
    Ok(all)
}

/// Removes a connection; false when it was not there.
pub async fn remove(store: &dyn ItemStore, org: Uuid, id: Uuid) -> Result<bool, StoreError> {
    store
        .delete(
            &keys::org_pk(org),
            &keys::dns_connection_sk(id),
            Condition::None,
        )
        .await
}
