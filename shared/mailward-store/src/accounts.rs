//! Accounts (people) and their memberships in organizations.

use super::{Versioned, decode, decode_versioned, encode, keys};
use mailward_domain::model::{Account, Membership};
use mailward_domain::store::{Index, Item, ItemStore, Query, StoreError, query_all};
use uuid::Uuid;

/// The stored item of an account.
pub fn account_item(account: &Account) -> Result<Item, StoreError> {
    Ok(Item::new(
        keys::account_pk(&account.email),
        keys::ACCOUNT_SK,
        encode(account)?,
    )
    .with_gsi1(keys::account_id_gsi(account.id), keys::ACCOUNT_SK))
}

/// The account registered under a normalised email.
pub async fn get_by_email(
    store: &dyn ItemStore,
    email: &str,
) -> Result<Option<Versioned<Account>>, StoreError> {
    store
        .get(&keys::account_pk(email), keys::ACCOUNT_SK, true)
        .await?
        .map(|item| decode_versioned(&item))
        .transpose()
}

/// The stored item of a membership (in the organization's partition, indexed under the account).
pub fn membership_item(membership: &Membership) -> Result<Item, StoreError> {
    Ok(Item::new(
        keys::org_pk(membership.org_id),
        keys::member_sk(membership.account_id),
        encode(membership)?,
    )
    .with_gsi1(
        keys::account_id_gsi(membership.account_id),
        keys::membership_gsi_sk(membership.org_id),
    ))
}

/// One account's membership in one organization.
pub async fn membership(
    store: &dyn ItemStore,
    org: Uuid,
    account: Uuid,
) -> Result<Option<Membership>, StoreError> {
    store
        .get(&keys::org_pk(org), &keys::member_sk(account), true)
        .await?
        .map(|item| decode(&item))
        .transpose()
}

/// Every membership of an organization.
pub async fn members_of(store: &dyn ItemStore, org: Uuid) -> Result<Vec<Membership>, StoreError> {
    query_all(
        store,
        Query::partition(keys::org_pk(org)).prefix(keys::MEMBER_PREFIX),
    )
    .await?
    .iter()
    .map(decode)
    .collect()
}

/// Every organization an account belongs to (through the account index).
pub async fn memberships_of(
    store: &dyn ItemStore,
    account: Uuid,
) -> Result<Vec<Membership>, StoreError> {
    query_all(
        store,
        Query::partition(keys::account_id_gsi(account))
            .on(Index::Gsi1)
            .prefix("ORG#"),
    )
    .await?
    .iter()
    .map(decode)
    .collect()
}
