//! Invitations: each in its organization's partition, plus a lookup item per acceptance token
//! (`INVITETOKEN#<sha256 of token>`), read strongly consistent when the invitee accepts, and
//! both expiring with the invitation.

use super::{Versioned, decode, decode_versioned, encode, keys};
use mailward_domain::admin::Invitation;
use mailward_domain::store::{Condition, Item, ItemStore, Query, StoreError, WriteOp, query_all};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

/// What a token resolves to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TokenLookup {
    pub org_id: Uuid,
    pub invitation_id: Uuid,
}

fn item(invitation: &Invitation, version: u64) -> Result<Item, StoreError> {
    Ok(Item::new(
        keys::org_pk(invitation.org_id),
        keys::invitation_sk(invitation.id),
        encode(invitation)?,
    )
    .with_version(version)
    .expiring_at(invitation.expires_at.unix_timestamp()))
}

fn token_item(invitation: &Invitation) -> Result<Item, StoreError> {
    Ok(Item::new(
        keys::invitation_token_pk(&invitation.token_hash),
        keys::INVITATION_TOKEN_SK,
        encode(&TokenLookup {
            org_id: invitation.org_id,
            invitation_id: invitation.id,
        })?,
    )
    .expiring_at(invitation.expires_at.unix_timestamp()))
}

/// The writes that store a new invitation and its token.
pub fn create_ops(invitation: &Invitation) -> Result<Vec<WriteOp>, StoreError> {
    Ok(vec![
        WriteOp::Put {
            item: item(invitation, 1)?,
            condition: Condition::NotExists,
        },
        WriteOp::Put {
            item: token_item(invitation)?,
            condition: Condition::NotExists,
        },
    ])
}

/// The write that saves an invitation read at `version` whose token did not change.
pub fn save_op(invitation: &Invitation, version: u64) -> Result<WriteOp, StoreError> {
    Ok(WriteOp::Put {
        item: item(invitation, version + 1)?,
        condition: Condition::Version(version),
    })
}

/// The writes that replace an invitation read at `version` whose token changed from
/// `old_token_hash` (a resend).
pub fn replace_ops(
    invitation: &Invitation,
    version: u64,
    old_token_hash: &str,
) -> Result<Vec<WriteOp>, StoreError> {
    Ok(vec![
        WriteOp::Put {
            item: item(invitation, version + 1)?,
            condition: Condition::Version(version),
        },
        WriteOp::Delete {
            pk: keys::invitation_token_pk(old_token_hash),
            sk: keys::INVITATION_TOKEN_SK.into(),
            condition: Condition::None,
        },
        WriteOp::Put {
            item: token_item(invitation)?,
            condition: Condition::NotExists,
        },
    ])
}

/// The writes that remove an invitation read at `version` and its token (revoked or accepted).
pub fn remove_ops(invitation: &Invitation, version: u64) -> Vec<WriteOp> {
    vec![
        WriteOp::Delete {
            pk: keys::org_pk(invitation.org_id),
            sk: keys::invitation_sk(invitation.id),
            condition: Condition::Version(version),
        },
        WriteOp::Delete {
            pk: keys::invitation_token_pk(&invitation.token_hash),
            sk: keys::INVITATION_TOKEN_SK.into(),
            condition: Condition::None,
        },
    ]
}

/// One live invitation of an organization.
pub async fn get(
    store: &dyn ItemStore,
    org: Uuid,
    id: Uuid,
) -> Result<Option<Versioned<Invitation>>, StoreError> {
    store
        .get(&keys::org_pk(org), &keys::invitation_sk(id), true)
        .await?
        .map(|i| decode_versioned(&i))
        .transpose()
}

/// The live invitation a token belongs to.
pub async fn by_token_hash(
    store: &dyn ItemStore,
    token_hash: &str,
) -> Result<Option<Versioned<Invitation>>, StoreError> {
    let Some(lookup) = store
        .get(
            &keys::invitation_token_pk(token_hash),
            keys::INVITATION_TOKEN_SK,
            true,
        )
        .await?
    else {
        return Ok(None);
    };
    let lookup: TokenLookup = decode(&lookup)?;
    get(store, lookup.org_id, lookup.invitation_id).await
}

/// Every live invitation of an organization, oldest first.
pub async fn list(store: &dyn ItemStore, org: Uuid) -> Result<Vec<Invitation>, StoreError> {
    let mut all: Vec<Invitation> = query_all(
        store,
        Query::partition(keys::org_pk(org)).prefix(keys::INVITATION_PREFIX),
    )
    .await?
    .iter()
    .map(decode)
    .collect::<Result<_, _>>()?;
    all.sort_by(|a, b| a.created_at.cmp(&b.created_at).then(a.id.cmp(&b.id)));
    Ok(all)
}
