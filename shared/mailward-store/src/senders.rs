//! A domain's senders (SPEC §2.6 DomainSource) in the domain's partition ([`crate::domain_data`]), and the
//! reverse-DNS cache of source IPs shared by every organization (a PTR name is public data).

use super::Versioned;
use super::{decode, domain_data, encode, keys};
use mailward_domain::senders::DomainSource;
use mailward_domain::store::{Condition, Item, ItemStore, StoreError, WriteOp};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

/// Seconds a reverse-DNS answer (or its absence) is kept.
pub const PTR_CACHE_SECS: i64 = 7 * 86_400;

/// Every sender of a domain, with its version.
pub async fn list(
    store: &dyn ItemStore,
    org: Uuid,
    domain: Uuid,
) -> Result<Vec<Versioned<DomainSource>>, StoreError> {
    domain_data::query_prefix(store, org, domain, keys::senders_prefix(domain))
        .await?
        .iter()
        .map(|item| {
            Ok(Versioned {
                value: decode(item)?,
                version: item.version,
            })
        })
        .collect()
}

/// One sender of a domain.
pub async fn get(
    store: &dyn ItemStore,
    org: Uuid,
    domain: Uuid,
    id: Uuid,
) -> Result<Option<Versioned<DomainSource>>, StoreError> {
    domain_data::get(store, org, domain, &keys::sender_sk(domain, id), true)
        .await?
        .map(|item| {
            Ok(Versioned {
                value: decode(&item)?,
                version: item.version,
            })
        })
        .transpose()
}

/// Writes a sender: created when `version` is `None`, else only over that version.
pub fn save_op(source: &DomainSource, version: Option<u64>) -> Result<WriteOp, StoreError> {
    Ok(WriteOp::Put {
        item: Item::new(
            keys::domain_pk(source.org_id, source.domain_id),
            keys::sender_sk(source.domain_id, source.id),
            encode(source)?,
        )
        .with_version(version.map_or(1, |v| v + 1)),
        condition: match version {
            None => Condition::NotExists,
            Some(v) => Condition::Version(v),
        },
    })
}

/// A cached reverse-DNS answer: the name, or `None` when the address has none.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CachedPtr {
    pub name: Option<String>,
}

/// The cached reverse-DNS answer of an address, if still fresh.
pub async fn cached_ptr(store: &dyn ItemStore, ip: &str) -> Result<Option<CachedPtr>, StoreError> {
    store
        .get(&keys::ptr_pk(ip), keys::PTR_SK, false)
        .await?
        .map(|item| decode(&item))
        .transpose()
}

/// Caches a reverse-DNS answer for [`PTR_CACHE_SECS`].
pub async fn cache_ptr(
    store: &dyn ItemStore,
    ip: &str,
    name: Option<&str>,
    now_unix: i64,
) -> Result<(), StoreError> {
    let value = CachedPtr {
        name: name.map(str::to_owned),
    };
    let item = Item::new(keys::ptr_pk(ip), keys::PTR_SK, encode(&value)?)
        .expiring_at(now_unix + PTR_CACHE_SECS);
    store.put(item, Condition::None).await
}
