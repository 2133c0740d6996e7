//! Accounts (people) and their memberships in organizations.

use super::{Versioned, decode, decode_versioned, encode, keys};
use mailward_domain::model::{Account, Membership};
use mailward_domain::store::{
    Condition, Index, Item, ItemStore, Query, StoreError, WriteOp, query_all,
};
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

/// One membership with its version (for changes).
pub async fn membership_versioned(
    store: &dyn ItemStore,
    org: Uuid,
    account: Uuid,
) -> Result<Option<Versioned<Membership>>, StoreError> {
    store
        .get(&keys::org_pk(org), &keys::member_sk(account), true)
        .await?
        .map(|item| decode_versioned(&item))
        .transpose()
}

/// The write that adds a membership (fails when the account is already a member).
pub fn add_membership_op(membership: &Membership) -> Result<WriteOp, StoreError> {
    Ok(WriteOp::Put {
        item: membership_item(membership)?,
        condition: Condition::NotExists,
    })
}

/// The write that saves a changed membership read at `version`.
pub fn save_membership_op(membership: &Membership, version: u64) -> Result<WriteOp, StoreError> {
    Ok(WriteOp::Put {
        item: membership_item(membership)?.with_version(version + 1),
        condition: Condition::Version(version),
    })
}

/// The write that removes a membership read at `version`.
pub fn remove_membership_op(org: Uuid, account: Uuid, version: u64) -> WriteOp {
    WriteOp::Delete {
        pk: keys::org_pk(org),
        sk: keys::member_sk(account),
        condition: Condition::Version(version),
    }
}

/// Notes that the member signed in with a second factor (once; a lost race changes nothing).
pub async fn note_mfa(
    store: &dyn ItemStore,
    membership: &Membership,
    now: time::OffsetDateTime,
) -> Result<(), StoreError> {
    let Some(current) =
        membership_versioned(store, membership.org_id, membership.account_id).await?
    else {
        return Ok(());
    };
    let mut next = current.value;
    next.mfa_seen_at = Some(now);
    match store
        .transact(vec![save_membership_op(&next, current.version)?])
        .await
    {
        Err(e) if e.is_conflict() => Ok(()),
        other => other,
    }
}

/// An account by id (through the account index).
pub async fn get_by_id(store: &dyn ItemStore, id: Uuid) -> Result<Option<Account>, StoreError> {
    Ok(query_all(
        store,
        Query::partition(keys::account_id_gsi(id))
            .on(Index::Gsi1)
            .prefix(keys::ACCOUNT_SK),
    )
    .await?
    .iter()
    .find_map(|item| decode::<Account>(item).ok()))
}

/// Every membership of an organization with its version (for the last-administrator guard).
pub async fn members_of_versioned(
    store: &dyn ItemStore,
    org: Uuid,
) -> Result<Vec<Versioned<Membership>>, StoreError> {
    query_all(
        store,
        Query::partition(keys::org_pk(org)).prefix(keys::MEMBER_PREFIX),
    )
    .await?
    .iter()
    .map(decode_versioned)
    .collect()
}

/// A write that changes nothing but fails unless the membership is still at `version` (keeps
/// another administrator in place while one is demoted or removed).
pub fn unchanged_membership_op(org: Uuid, account: Uuid, version: u64) -> WriteOp {
    WriteOp::Check {
        pk: keys::org_pk(org),
        sk: keys::member_sk(account),
        condition: Condition::Version(version),
    }
}

/// The write that registers a new account (fails when the address already has one).
pub fn create_account_op(account: &Account) -> Result<WriteOp, StoreError> {
    Ok(WriteOp::Put {
        item: account_item(account)?,
        condition: Condition::NotExists,
    })
}
