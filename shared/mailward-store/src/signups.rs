//! Headless signup challenges (TTL 15 minutes) and the per-address code counter.

use super::{Versioned, decode_versioned, encode, keys};
use mailward_domain::model::SignupChallenge;
use mailward_domain::store::{Condition, Item, ItemStore, StoreError, WriteOp};
use uuid::Uuid;

fn item(challenge: &SignupChallenge, version: u64) -> Result<Item, StoreError> {
    Ok(Item::new(
        keys::signup_pk(challenge.id),
        keys::SIGNUP_SK,
        encode(challenge)?,
    )
    .with_version(version)
    .expiring_at(challenge.expires_at.unix_timestamp()))
}

/// Stores a new challenge.
pub async fn create(store: &dyn ItemStore, challenge: &SignupChallenge) -> Result<(), StoreError> {
    store.put(item(challenge, 1)?, Condition::NotExists).await
}

/// Reads a live challenge (expired ones are invisible).
pub async fn get(
    store: &dyn ItemStore,
    id: Uuid,
) -> Result<Option<Versioned<SignupChallenge>>, StoreError> {
    store
        .get(&keys::signup_pk(id), keys::SIGNUP_SK, true)
        .await?
        .map(|item| decode_versioned(&item))
        .transpose()
}

/// Saves a challenge after a failed attempt, if nobody else touched it.
pub async fn save(
    store: &dyn ItemStore,
    challenge: &SignupChallenge,
    read_version: u64,
) -> Result<(), StoreError> {
    store
        .put(
            item(challenge, read_version + 1)?,
            Condition::Version(read_version),
        )
        .await
}

/// Deletes a challenge (best effort, e.g. when its email could not be sent).
pub async fn delete(store: &dyn ItemStore, id: Uuid) -> Result<(), StoreError> {
    store
        .delete(&keys::signup_pk(id), keys::SIGNUP_SK, Condition::None)
        .await
        .map(|_| ())
}

/// The write that consumes a challenge exactly once (inside the account-creating transaction).
pub fn consume_op(id: Uuid, read_version: u64) -> WriteOp {
    WriteOp::Delete {
        pk: keys::signup_pk(id),
        sk: keys::SIGNUP_SK.into(),
        condition: Condition::Version(read_version),
    }
}

/// Counts one code sent to `email` in the current hour; returns the count and the hour's end.
pub async fn count_code_sent(
    store: &dyn ItemStore,
    email: &str,
    now_unix: i64,
) -> Result<(i64, i64), StoreError> {
    let hour_start = now_unix - now_unix.rem_euclid(3600);
    let hour_end = hour_start + 3600;
    let count = store
        .increment(
            &keys::signup_rate_pk(email),
            &hour_start.to_string(),
            1,
            Some(hour_end),
        )
        .await?;
    Ok((count, hour_end))
}
