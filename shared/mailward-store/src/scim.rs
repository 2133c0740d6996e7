//! SCIM tokens (metadata under the organization, a lookup by hash) and SCIM-provisioned users.

use super::{Versioned, decode, decode_versioned, encode, keys};
use mailward_domain::scim::{ScimToken, ScimTokenLookup, ScimUser};
use mailward_domain::secrets;
use mailward_domain::store::{Condition, Item, ItemStore, Query, StoreError, WriteOp, query_all};
use uuid::Uuid;

/// Stores a new token and its lookup.
pub async fn create_token(store: &dyn ItemStore, token: &ScimToken) -> Result<(), StoreError> {
    let lookup = ScimTokenLookup {
        org_id: token.org_id,
        token_id: token.id,
    };
    store
        .transact(vec![
            WriteOp::Put {
                item: Item::new(
                    keys::org_pk(token.org_id),
                    keys::scim_token_sk(token.id),
                    encode(token)?,
                ),
                condition: Condition::NotExists,
            },
            WriteOp::Put {
                item: Item::new(
                    keys::scim_lookup_pk(&token.token_hash),
                    keys::SCIM_LOOKUP_SK,
                    encode(&lookup)?,
                ),
                condition: Condition::NotExists,
            },
        ])
        .await
}

/// The organization's tokens.
pub async fn tokens(store: &dyn ItemStore, org: Uuid) -> Result<Vec<ScimToken>, StoreError> {
    query_all(
        store,
        Query::partition(keys::org_pk(org)).prefix(keys::SCIM_TOKEN_PREFIX),
    )
    .await?
    .iter()
    .map(decode)
    .collect()
}

/// Deletes a token and its lookup; `false` when it was gone.
pub async fn delete_token(store: &dyn ItemStore, org: Uuid, id: Uuid) -> Result<bool, StoreError> {
    let Some(item) = store
        .get(&keys::org_pk(org), &keys::scim_token_sk(id), true)
        .await?
    else {
        return Ok(false);
    };
    let token: ScimToken = decode(&item)?;
    store
        .transact(vec![
            WriteOp::Delete {
                pk: keys::org_pk(org),
                sk: keys::scim_token_sk(id),
                condition: Condition::None,
            },
            WriteOp::Delete {
                pk: keys::scim_lookup_pk(&token.token_hash),
                sk: keys::SCIM_LOOKUP_SK.to_owned(),
                condition: Condition::None,
            },
        ])
        .await?;
    Ok(true)
}

/// The token presented, by its value (strongly consistent, like API keys).
pub async fn find_token(
    store: &dyn ItemStore,
    token: &str,
) -> Result<Option<ScimTokenLookup>, StoreError> {
    store
        .get(
            &keys::scim_lookup_pk(&secrets::sha256_hex(token.as_bytes())),
            keys::SCIM_LOOKUP_SK,
            true,
        )
        .await?
        .map(|item| decode(&item))
        .transpose()
}

/// A provisioned user.
pub async fn user(
    store: &dyn ItemStore,
    org: Uuid,
    account: Uuid,
) -> Result<Option<Versioned<ScimUser>>, StoreError> {
    store
        .get(&keys::org_pk(org), &keys::scim_user_sk(account), true)
        .await?
        .map(|item| decode_versioned(&item))
        .transpose()
}

/// Every provisioned user of the organization.
pub async fn users(store: &dyn ItemStore, org: Uuid) -> Result<Vec<ScimUser>, StoreError> {
    query_all(
        store,
        Query::partition(keys::org_pk(org)).prefix(keys::SCIM_USER_PREFIX),
    )
    .await?
    .iter()
    .map(decode)
    .collect()
}

/// The write of a provisioned user: created when `version` is `None`, else replacing exactly it.
pub fn put_user_op(user: &ScimUser, version: Option<u64>) -> Result<WriteOp, StoreError> {
    let (item, condition) = crate::versioned_item(
        keys::org_pk(user.org_id),
        keys::scim_user_sk(user.account_id),
        user,
        version,
    )?;
    Ok(WriteOp::Put { item, condition })
}

/// The deletion of a provisioned user read at `version`.
pub fn delete_user_op(org: Uuid, account: Uuid, version: u64) -> WriteOp {
    WriteOp::Delete {
        pk: keys::org_pk(org),
        sk: keys::scim_user_sk(account),
        condition: Condition::Version(version),
    }
}
