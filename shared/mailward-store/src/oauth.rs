//! The authorization server's items: sign-in challenges, authorization codes, connections and
//! their refresh-token lookups, and the access-token signing keys.

use super::{Versioned, decode, decode_versioned, encode, keys};
use mailward_domain::oauth::{
    AuthorizationCode, Connection, RefreshLookup, SignInChallenge, SigningKey,
};
use mailward_domain::store::{Condition, Item, ItemStore, Query, StoreError, WriteOp, query_all};
use uuid::Uuid;

/// How long a superseded refresh token's lookup is kept to recognise its reuse.
pub const REFRESH_LOOKUP_TTL_SECS: i64 = 90 * 86_400;

fn challenge_item(c: &SignInChallenge, version: u64) -> Result<Item, StoreError> {
    Ok(
        Item::new(keys::oauth_login_pk(c.id), keys::OAUTH_LOGIN_SK, encode(c)?)
            .with_version(version)
            .expiring_at(c.expires_at.unix_timestamp()),
    )
}

/// Stores a new sign-in challenge.
pub async fn create_challenge(
    store: &dyn ItemStore,
    c: &SignInChallenge,
) -> Result<(), StoreError> {
    store.put(challenge_item(c, 1)?, Condition::NotExists).await
}

/// Reads a live sign-in challenge.
pub async fn get_challenge(
    store: &dyn ItemStore,
    id: Uuid,
) -> Result<Option<Versioned<SignInChallenge>>, StoreError> {
    store
        .get(&keys::oauth_login_pk(id), keys::OAUTH_LOGIN_SK, true)
        .await?
        .map(|item| decode_versioned(&item))
        .transpose()
}

/// Saves a challenge after a wrong code, if nobody else touched it.
pub async fn save_challenge(
    store: &dyn ItemStore,
    c: &SignInChallenge,
    read_version: u64,
) -> Result<(), StoreError> {
    store
        .put(
            challenge_item(c, read_version + 1)?,
            Condition::Version(read_version),
        )
        .await
}

/// Consumes a challenge once: `false` when another request consumed it first.
pub async fn consume_challenge(
    store: &dyn ItemStore,
    id: Uuid,
    read_version: u64,
) -> Result<bool, StoreError> {
    match store
        .delete(
            &keys::oauth_login_pk(id),
            keys::OAUTH_LOGIN_SK,
            Condition::Version(read_version),
        )
        .await
    {
        Ok(_) => Ok(true),
        Err(e) if e.is_conflict() => Ok(false),
        Err(e) => Err(e),
    }
}

fn code_item(hash: &str, code: &AuthorizationCode, version: u64) -> Result<Item, StoreError> {
    Ok(Item::new(
        keys::oauth_code_pk(hash),
        keys::OAUTH_CODE_SK,
        encode(code)?,
    )
    .with_version(version)
    // Kept past its expiry for a while so a late reuse still revokes what it issued.
    .expiring_at(code.expires_at.unix_timestamp() + 3600))
}

/// Stores a new authorization code under its hash.
pub async fn create_code(
    store: &dyn ItemStore,
    hash: &str,
    code: &AuthorizationCode,
) -> Result<(), StoreError> {
    store
        .put(code_item(hash, code, 1)?, Condition::NotExists)
        .await
}

/// Reads an authorization code by its hash.
pub async fn get_code(
    store: &dyn ItemStore,
    hash: &str,
) -> Result<Option<Versioned<AuthorizationCode>>, StoreError> {
    store
        .get(&keys::oauth_code_pk(hash), keys::OAUTH_CODE_SK, true)
        .await?
        .map(|item| decode_versioned(&item))
        .transpose()
}

fn connection_item(c: &Connection, version: u64) -> Result<Item, StoreError> {
    Ok(Item::new(
        keys::oauth_connections_pk(c.account_id),
        keys::oauth_connection_sk(c.id),
        encode(c)?,
    )
    .with_version(version))
}

fn lookup_item(hash: &str, lookup: &RefreshLookup, now: i64) -> Result<Item, StoreError> {
    Ok(Item::new(
        keys::oauth_refresh_pk(hash),
        keys::OAUTH_REFRESH_SK,
        encode(lookup)?,
    )
    .expiring_at(now + REFRESH_LOOKUP_TTL_SECS))
}

/// Exchanges a code: marks it used (at `code_version`), stores the new connection and its
/// first refresh token's lookup, all or nothing.
pub async fn exchange_code(
    store: &dyn ItemStore,
    code_hash: &str,
    used: &AuthorizationCode,
    code_version: u64,
    connection: &Connection,
    now: i64,
) -> Result<(), StoreError> {
    let lookup = RefreshLookup {
        account_id: connection.account_id,
        connection_id: connection.id,
    };
    let mut ops = vec![
        WriteOp::Put {
            item: code_item(code_hash, used, code_version + 1)?,
            condition: Condition::Version(code_version),
        },
        WriteOp::Put {
            item: connection_item(connection, 1)?,
            condition: Condition::NotExists,
        },
    ];
    // No refresh token (no `offline_access`): no lookup to find the connection by.
    if !connection.refresh_hash.is_empty() {
        ops.push(WriteOp::Put {
            item: lookup_item(&connection.refresh_hash, &lookup, now)?,
            condition: Condition::NotExists,
        });
    }
    store.transact(ops).await
}

/// Reads a connection.
pub async fn get_connection(
    store: &dyn ItemStore,
    account: Uuid,
    id: Uuid,
) -> Result<Option<Versioned<Connection>>, StoreError> {
    store
        .get(
            &keys::oauth_connections_pk(account),
            &keys::oauth_connection_sk(id),
            true,
        )
        .await?
        .map(|item| decode_versioned(&item))
        .transpose()
}

/// Every connection of an account.
pub async fn list_connections(
    store: &dyn ItemStore,
    account: Uuid,
) -> Result<Vec<Connection>, StoreError> {
    query_all(store, Query::partition(keys::oauth_connections_pk(account)))
        .await?
        .iter()
        .map(decode)
        .collect()
}

/// Rotates a connection's refresh token: the connection (read at `version`) now carries the new
/// hash, and the new token's lookup is stored. Fails with a conflict when a concurrent refresh won.
pub async fn rotate(
    store: &dyn ItemStore,
    connection: &Connection,
    version: u64,
    now: i64,
) -> Result<(), StoreError> {
    let lookup = RefreshLookup {
        account_id: connection.account_id,
        connection_id: connection.id,
    };
    store
        .transact(vec![
            WriteOp::Put {
                item: connection_item(connection, version + 1)?,
                condition: Condition::Version(version),
            },
            WriteOp::Put {
                item: lookup_item(&connection.refresh_hash, &lookup, now)?,
                condition: Condition::NotExists,
            },
        ])
        .await
}

/// Reads a refresh token's lookup by the token's hash.
pub async fn get_refresh(
    store: &dyn ItemStore,
    hash: &str,
) -> Result<Option<RefreshLookup>, StoreError> {
    store
        .get(&keys::oauth_refresh_pk(hash), keys::OAUTH_REFRESH_SK, true)
        .await?
        .map(|item| decode(&item))
        .transpose()
}

/// Deletes a connection: every token of its family stops working. `false` when it was gone.
pub async fn delete_connection(
    store: &dyn ItemStore,
    account: Uuid,
    id: Uuid,
) -> Result<bool, StoreError> {
    store
        .delete(
            &keys::oauth_connections_pk(account),
            &keys::oauth_connection_sk(id),
            Condition::None,
        )
        .await
}

/// Every signing key, newest first.
pub async fn signing_keys(store: &dyn ItemStore) -> Result<Vec<SigningKey>, StoreError> {
    let mut keys: Vec<SigningKey> = query_all(store, Query::partition(keys::OAUTH_KEYS_PK))
        .await?
        .iter()
        .map(decode)
        .collect::<Result<_, _>>()?;
    keys.sort_by_key(|k| std::cmp::Reverse(k.created_at));
    Ok(keys)
}

/// Stores a new signing key; `false` when one with that id exists.
pub async fn put_signing_key(store: &dyn ItemStore, key: &SigningKey) -> Result<bool, StoreError> {
    let item = Item::new(
        keys::OAUTH_KEYS_PK,
        keys::oauth_key_sk(&key.kid),
        encode(key)?,
    );
    match store.put(item, Condition::NotExists).await {
        Ok(()) => Ok(true),
        Err(e) if e.is_conflict() => Ok(false),
        Err(e) => Err(e),
    }
}

/// Replaces a signing key's record (to mark it retired).
pub async fn save_signing_key(store: &dyn ItemStore, key: &SigningKey) -> Result<(), StoreError> {
    let item = Item::new(
        keys::OAUTH_KEYS_PK,
        keys::oauth_key_sk(&key.kid),
        encode(key)?,
    );
    store.put(item, Condition::None).await
}

/// Adds `add` wrong sign-in codes of `email` from `client` (a rate-limit subject) to today's
/// count (0 only reads it); the count and the end of the day, when it is forgotten.
pub async fn signin_failures(
    store: &dyn ItemStore,
    email: &str,
    client: &str,
    now_unix: i64,
    add: i64,
) -> Result<(i64, i64), StoreError> {
    let day_start = now_unix - now_unix.rem_euclid(86_400);
    let day_end = day_start + 86_400;
    let (pk, sk) = (
        keys::signin_failures_pk(email),
        format!("{day_start}#{client}"),
    );
    if add == 0 {
        // A read, not an increment by zero (DynamoDB's UPDATED_NEW answers nothing for it).
        let count = store
            .get(&pk, &sk, true)
            .await?
            .filter(|item| item.expires_at.is_none_or(|at| at > now_unix))
            .and_then(|item| item.counter)
            .unwrap_or(0);
        return Ok((count, day_end));
    }
    let count = store.increment(&pk, &sk, add, Some(day_end)).await?;
    Ok((count, day_end))
}
