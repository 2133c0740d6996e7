//! An account's identity items: its TOTP factor and its dashboard sessions, in one partition
//! per account.

use super::{Versioned, decode, decode_versioned, encode, keys, put_versioned};
use mailward_domain::identity::{DashboardSession, SsoAttempt, SsoConnection, TotpFactor};
use mailward_domain::store::{Condition, Item, ItemStore, Query, StoreError, WriteOp, query_all};
use uuid::Uuid;

/// The account's TOTP factor (pending or confirmed).
pub async fn totp(
    store: &dyn ItemStore,
    account: Uuid,
) -> Result<Option<Versioned<TotpFactor>>, StoreError> {
    store
        .get(&keys::identity_pk(account), keys::TOTP_SK, true)
        .await?
        .map(|item| decode_versioned(&item))
        .transpose()
}

/// Whether the account has a confirmed TOTP factor.
pub async fn has_totp(store: &dyn ItemStore, account: Uuid) -> Result<bool, StoreError> {
    Ok(totp(store, account)
        .await?
        .is_some_and(|f| f.value.confirmed_at.is_some()))
}

/// Writes the factor: created when `version` is `None`, else replacing exactly that version
/// (a conflict when a concurrent request used a code or changed it first).
pub async fn save_totp(
    store: &dyn ItemStore,
    factor: &TotpFactor,
    version: Option<u64>,
) -> Result<(), StoreError> {
    put_versioned(
        store,
        keys::identity_pk(factor.account_id),
        keys::TOTP_SK.to_owned(),
        factor,
        version,
    )
    .await
}

/// Removes the factor read at `version`; `false` when it changed or was gone.
pub async fn delete_totp(
    store: &dyn ItemStore,
    account: Uuid,
    version: u64,
) -> Result<bool, StoreError> {
    match store
        .delete(
            &keys::identity_pk(account),
            keys::TOTP_SK,
            Condition::Version(version),
        )
        .await
    {
        Ok(deleted) => Ok(deleted),
        Err(e) if e.is_conflict() => Ok(false),
        Err(e) => Err(e),
    }
}

fn session_item(session: &DashboardSession, version: u64) -> Result<Item, StoreError> {
    Ok(Item::new(
        keys::identity_pk(session.account_id),
        keys::session_sk(session.id),
        encode(session)?,
    )
    .with_version(version)
    .expiring_at(session.expires_at.unix_timestamp()))
}

/// Stores a new session.
pub async fn create_session(
    store: &dyn ItemStore,
    session: &DashboardSession,
) -> Result<(), StoreError> {
    store
        .put(session_item(session, 1)?, Condition::NotExists)
        .await
}

/// A live session of the account.
pub async fn session(
    store: &dyn ItemStore,
    account: Uuid,
    id: Uuid,
) -> Result<Option<Versioned<DashboardSession>>, StoreError> {
    store
        .get(&keys::identity_pk(account), &keys::session_sk(id), true)
        .await?
        .map(|item| decode_versioned(&item))
        .transpose()
}

/// Replaces a session read at `version` (a step-up to MFA); a conflict when it changed.
pub async fn save_session(
    store: &dyn ItemStore,
    session: &DashboardSession,
    version: u64,
) -> Result<(), StoreError> {
    store
        .put(
            session_item(session, version + 1)?,
            Condition::Version(version),
        )
        .await
}

/// Every live session of the account.
pub async fn sessions(
    store: &dyn ItemStore,
    account: Uuid,
) -> Result<Vec<DashboardSession>, StoreError> {
    query_all(
        store,
        Query::partition(keys::identity_pk(account)).prefix(keys::SESSION_PREFIX),
    )
    .await?
    .iter()
    .map(decode)
    .collect()
}

/// Ends a session; `false` when it was gone.
pub async fn delete_session(
    store: &dyn ItemStore,
    account: Uuid,
    id: Uuid,
) -> Result<bool, StoreError> {
    store
        .delete(
            &keys::identity_pk(account),
            &keys::session_sk(id),
            Condition::None,
        )
        .await
}

/// Ends every session of the account in `org` (removal from the organization); how many.
pub async fn end_sessions_in(
    store: &dyn ItemStore,
    account: Uuid,
    org: Uuid,
) -> Result<usize, StoreError> {
    let mut ended = 0;
    for session in sessions(store, account).await? {
        if session.org_id == org && delete_session(store, account, session.id).await? {
            ended += 1;
        }
    }
    Ok(ended)
}

/// The organization's single sign-on connection.
pub async fn sso(
    store: &dyn ItemStore,
    org: Uuid,
) -> Result<Option<Versioned<SsoConnection>>, StoreError> {
    store
        .get(&keys::org_pk(org), keys::SSO_SK, true)
        .await?
        .map(|item| decode_versioned(&item))
        .transpose()
}

/// Writes the connection (created when `version` is `None`) and the routing index of its
/// verified domains: the domains verified now are indexed, the ones no longer are removed.
pub async fn save_sso(
    store: &dyn ItemStore,
    connection: &SsoConnection,
    version: Option<u64>,
    previously_verified: &[String],
) -> Result<(), StoreError> {
    let (item, condition) = crate::versioned_item(
        keys::org_pk(connection.org_id),
        keys::SSO_SK.to_owned(),
        connection,
        version,
    )?;
    let mut ops = vec![WriteOp::Put { item, condition }];
    let verified: Vec<&str> = connection
        .domains
        .iter()
        .filter(|d| d.verified_at.is_some())
        .map(|d| d.name.as_str())
        .collect();
    for name in &verified {
        ops.push(WriteOp::Put {
            item: Item::new(
                keys::sso_domain_pk(name),
                keys::org_pk(connection.org_id),
                encode(&connection.org_id)?,
            ),
            condition: Condition::None,
        });
    }
    for name in previously_verified {
        if !verified.contains(&name.as_str()) {
            ops.push(WriteOp::Delete {
                pk: keys::sso_domain_pk(name),
                sk: keys::org_pk(connection.org_id),
                condition: Condition::None,
            });
        }
    }
    store.transact(ops).await
}

/// Removes the connection read at `version` and its routing index.
pub async fn delete_sso(
    store: &dyn ItemStore,
    connection: &SsoConnection,
    version: u64,
) -> Result<(), StoreError> {
    let mut ops = vec![WriteOp::Delete {
        pk: keys::org_pk(connection.org_id),
        sk: keys::SSO_SK.to_owned(),
        condition: Condition::Version(version),
    }];
    for domain in connection
        .domains
        .iter()
        .filter(|d| d.verified_at.is_some())
    {
        ops.push(WriteOp::Delete {
            pk: keys::sso_domain_pk(&domain.name),
            sk: keys::org_pk(connection.org_id),
            condition: Condition::None,
        });
    }
    store.transact(ops).await
}

/// The organizations whose single sign-on covers the verified email domain `name`.
pub async fn sso_orgs_for_domain(
    store: &dyn ItemStore,
    name: &str,
) -> Result<Vec<Uuid>, StoreError> {
    query_all(store, Query::partition(keys::sso_domain_pk(name)))
        .await?
        .iter()
        .map(decode)
        .collect()
}

/// Stores an attempt under the hash of its state (TTL its expiry).
pub async fn create_sso_attempt(
    store: &dyn ItemStore,
    attempt: &SsoAttempt,
) -> Result<(), StoreError> {
    let hash = mailward_domain::secrets::sha256_hex(attempt.state.as_bytes());
    store
        .put(
            Item::new(
                keys::sso_state_pk(&hash),
                keys::SSO_STATE_SK,
                encode(attempt)?,
            )
            .expiring_at(attempt.expires_at.unix_timestamp()),
            Condition::NotExists,
        )
        .await
}

/// Takes the attempt of `state` once: `None` when unknown, expired or already taken.
pub async fn take_sso_attempt(
    store: &dyn ItemStore,
    state: &str,
) -> Result<Option<SsoAttempt>, StoreError> {
    let pk = keys::sso_state_pk(&mailward_domain::secrets::sha256_hex(state.as_bytes()));
    let Some(item) = store.get(&pk, keys::SSO_STATE_SK, true).await? else {
        return Ok(None);
    };
    let attempt: SsoAttempt = decode(&item)?;
    match store
        .delete(&pk, keys::SSO_STATE_SK, Condition::Version(item.version))
        .await
    {
        Ok(true) => Ok(Some(attempt)),
        Ok(false) => Ok(None),
        Err(e) if e.is_conflict() => Ok(None),
        Err(e) => Err(e),
    }
}
