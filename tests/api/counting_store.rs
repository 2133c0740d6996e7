//! [`CountingStore`]: any store, counting the write units each partition key would consume on
//! DynamoDB, so a test can prove the key design spreads an organization's writes (a partition
//! key takes at most 1,000 write units a second). moto's own timing says nothing about
//! DynamoDB's; what it does say, once counted, is which keys every unit of work writes.
//!
//! DynamoDB's billing, as modelled here: a write costs one unit per started kilobyte of the item
//! (`PutItem`, `DeleteItem`, `UpdateItem`, each item of `BatchWriteItem`), twice that inside
//! `TransactWriteItems` (which `DynamoStore` uses for two ops or more, or a check); an item with a secondary-index key is written to that index too (both
//! indexes project every attribute), billed to the index's partition key. A delete is counted
//! as one kilobyte (the item's size is not known to the caller).

use async_trait::async_trait;
use mailward_domain::store::{Condition, Item, ItemStore, Page, Query, StoreError, WriteOp};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// Write units per key: table partitions as `pk`, index partitions as `GSI1:pk` / `GSI2:pk`.
pub type Units = HashMap<String, u64>;

/// Forwards every call to `inner`, counting write units per partition key.
pub struct CountingStore {
    inner: Arc<dyn ItemStore>,
    units: Arc<Mutex<Units>>,
}

impl std::fmt::Debug for CountingStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CountingStore").finish_non_exhaustive()
    }
}

/// The counts a [`CountingStore`] keeps, readable while it runs.
#[derive(Clone, Default)]
pub struct Counter(Arc<Mutex<Units>>);

impl Counter {
    /// The counts since the last call, emptied.
    pub fn take(&self) -> Units {
        std::mem::take(&mut *self.0.lock().expect("counter lock"))
    }
}

impl CountingStore {
    /// Wraps `inner`; `counter` reads what it counts.
    pub fn new(inner: Arc<dyn ItemStore>, counter: &Counter) -> Self {
        Self {
            inner,
            units: counter.0.clone(),
        }
    }

    fn charge(&self, item: &Item, times: u64) {
        let size = item.pk.len()
            + item.sk.len()
            + item.data.len()
            + [&item.gsi1, &item.gsi2]
                .into_iter()
                .flatten()
                .map(|k| k.pk.len() + k.sk.len())
                .sum::<usize>()
            // Attribute names and the version, counter and expiry numbers.
            + 40;
        let units = size.div_ceil(1024) as u64 * times;
        let mut map = self.units.lock().expect("counter lock");
        *map.entry(item.pk.clone()).or_default() += units;
        let kind = item.sk.split('#').next().unwrap_or_default();
        *map.entry(format!("KIND:{}|{kind}", item.pk)).or_default() += units;
        if let Some(k) = &item.gsi1 {
            *map.entry(format!("GSI1:{}", k.pk)).or_default() += units;
        }
        if let Some(k) = &item.gsi2 {
            *map.entry(format!("GSI2:{}", k.pk)).or_default() += units;
        }
    }

    fn charge_key(&self, pk: &str, units: u64) {
        *self
            .units
            .lock()
            .expect("counter lock")
            .entry(pk.to_owned())
            .or_default() += units;
    }
}

#[async_trait]
impl ItemStore for CountingStore {
    async fn get(&self, pk: &str, sk: &str, consistent: bool) -> Result<Option<Item>, StoreError> {
        self.inner.get(pk, sk, consistent).await
    }
    async fn put(&self, item: Item, condition: Condition) -> Result<(), StoreError> {
        self.charge(&item, 1);
        self.inner.put(item, condition).await
    }
    async fn delete(&self, pk: &str, sk: &str, condition: Condition) -> Result<bool, StoreError> {
        self.charge_key(pk, 1);
        self.inner.delete(pk, sk, condition).await
    }
    async fn query(&self, query: Query) -> Result<Page, StoreError> {
        self.inner.query(query).await
    }
    async fn scan(&self, cursor: Option<String>, limit: usize) -> Result<Page, StoreError> {
        self.inner.scan(cursor, limit).await
    }
    async fn transact(&self, ops: Vec<WriteOp>) -> Result<(), StoreError> {
        // One put or delete goes as a plain conditional write (`DynamoStore::transact`).
        let times = if ops.len() == 1 && !matches!(ops[0], WriteOp::Check { .. }) {
            1
        } else {
            2
        };
        for op in &ops {
            match op {
                WriteOp::Put { item, .. } => self.charge(item, times),
                WriteOp::Delete { pk, .. } | WriteOp::Check { pk, .. } => {
                    self.charge_key(pk, times)
                }
            }
        }
        self.inner.transact(ops).await
    }
    async fn write_each(&self, ops: Vec<WriteOp>) -> Result<Vec<bool>, StoreError> {
        for op in &ops {
            match op {
                WriteOp::Put { item, .. } => self.charge(item, 1),
                WriteOp::Delete { pk, .. } | WriteOp::Check { pk, .. } => self.charge_key(pk, 1),
            }
        }
        self.inner.write_each(ops).await
    }
    async fn put_all(&self, items: Vec<Item>) -> Result<(), StoreError> {
        for item in &items {
            self.charge(item, 1);
        }
        self.inner.put_all(items).await
    }
    async fn increment(
        &self,
        pk: &str,
        sk: &str,
        by: i64,
        expires_at: Option<i64>,
    ) -> Result<i64, StoreError> {
        self.charge_key(pk, 1);
        self.inner.increment(pk, sk, by, expires_at).await
    }
}
