//! The hosted zone kept in the item store: the local adapter of the hosted-zone port. One
//! partition per owner name (`ZONE#<name>`), one item per record type, so the embedded DNS
//! server answers a query with one partition read and tells NXDOMAIN from NODATA.

use super::keys;
use async_trait::async_trait;
use mailward_domain::hosted_zone::{HostedZone, ZoneError, ZoneRecord, ZoneRecordKind, normalize};
use mailward_domain::store::{Condition, Item, ItemStore, Query, StoreError, query_all};
use std::sync::Arc;

#[derive(serde::Serialize, serde::Deserialize)]
struct Stored {
    values: Vec<String>,
    ttl: u32,
}

fn kind_of(sk: &str) -> Option<ZoneRecordKind> {
    match sk {
        "TXT" => Some(ZoneRecordKind::Txt),
        "CNAME" => Some(ZoneRecordKind::Cname),
        _ => None,
    }
}

fn unavailable(e: StoreError) -> ZoneError {
    ZoneError::Unavailable(e.to_string())
}

/// The hosted zone in the item store.
#[derive(Clone)]
pub struct StoreZone {
    store: Arc<dyn ItemStore>,
}

impl StoreZone {
    /// A zone over `store`.
    pub fn new(store: Arc<dyn ItemStore>) -> Self {
        Self { store }
    }
}

#[async_trait]
impl HostedZone for StoreZone {
    async fn upsert(&self, records: &[ZoneRecord]) -> Result<(), ZoneError> {
        for record in records {
            let name = normalize(&record.name);
            if name.is_empty() || record.values.is_empty() {
                return Err(ZoneError::Rejected(format!(
                    "a record set needs a name and a value: {name:?}"
                )));
            }
            if record.kind == ZoneRecordKind::Cname && record.values.len() != 1 {
                return Err(ZoneError::Rejected(format!(
                    "{name}: a CNAME has exactly one target"
                )));
            }
            let data = serde_json::to_vec(&Stored {
                values: record.values.clone(),
                ttl: record.ttl,
            })
            .map_err(|e| ZoneError::Rejected(e.to_string()))?;
            let item = Item::new(keys::zone_pk(&name), record.kind.as_str(), data);
            self.store
                .put(item, Condition::None)
                .await
                .map_err(unavailable)?;
        }
        Ok(())
    }

    async fn remove(&self, keys_: &[(String, ZoneRecordKind)]) -> Result<(), ZoneError> {
        for (name, kind) in keys_ {
            self.store
                .delete(
                    &keys::zone_pk(&normalize(name)),
                    kind.as_str(),
                    Condition::None,
                )
                .await
                .map_err(unavailable)?;
        }
        Ok(())
    }

    async fn records(&self, name: &str) -> Result<Vec<ZoneRecord>, ZoneError> {
        let name = normalize(name);
        let items = query_all(self.store.as_ref(), Query::partition(keys::zone_pk(&name)))
            .await
            .map_err(unavailable)?;
        let mut out = Vec::new();
        for item in items {
            let (Some(kind), Ok(stored)) = (
                kind_of(&item.sk),
                serde_json::from_slice::<Stored>(&item.data),
            ) else {
                continue;
            };
            out.push(ZoneRecord {
                name: name.clone(),
                kind,
                values: stored.values,
                ttl: stored.ttl,
            });
        }
        Ok(out)
    }
}
