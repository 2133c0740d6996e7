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
//!
//! It also counts the requests each call would be on DynamoDB (one `ItemStore` call is one
//! request, but `put_all`, a `BatchWriteItem` per 25 items, and `write_each`, one conditional
//! write per operation) and the read units: a `GetItem` or a `Query` page costs one unit per
//! started 4 KB of what it returns, half of that when eventually consistent (every secondary
//! index read is). Items a query's filter drops are not seen here, so a page with expired items
//! costs at least what is counted.

use async_trait::async_trait;
use mailward_domain::store::{
    Condition, Index, Item, ItemStore, MAX_BATCH_GET_KEYS, Page, Query, StoreError, WriteOp,
};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// Write units per key: table partitions as `pk`, index partitions as `GSI1:pk` / `GSI2:pk`.
pub type Units = HashMap<String, u64>;

/// Requests by DynamoDB operation name, and read units in halves (an eventually consistent
/// read of up to 4 KB is half a unit).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Calls {
    /// Requests per operation (`GetItem`, `Query`, `PutItem`, `BatchWriteItem`, ...).
    pub requests: std::collections::BTreeMap<&'static str, u64>,
    /// Read units times two.
    pub half_read_units: u64,
}

impl Calls {
    /// Every request.
    pub fn total_requests(&self) -> u64 {
        self.requests.values().sum()
    }
    /// Read units.
    pub fn read_units(&self) -> f64 {
        self.half_read_units as f64 / 2.0
    }
}

/// Forwards every call to `inner`, counting write units per partition key.
pub struct CountingStore {
    inner: Arc<dyn ItemStore>,
    units: Arc<Mutex<Units>>,
    calls: Arc<Mutex<Calls>>,
}

impl std::fmt::Debug for CountingStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CountingStore").finish_non_exhaustive()
    }
}

/// The counts a [`CountingStore`] keeps, readable while it runs.
#[derive(Clone, Default)]
pub struct Counter(Arc<Mutex<Units>>, Arc<Mutex<Calls>>);

impl Counter {
    /// The write units since the last call, emptied.
    pub fn take(&self) -> Units {
        std::mem::take(&mut *self.0.lock().expect("counter lock"))
    }
    /// The requests and read units since the last call, emptied.
    pub fn take_calls(&self) -> Calls {
        std::mem::take(&mut *self.1.lock().expect("counter lock"))
    }
}

/// An item's size as DynamoDB bills it, roughly: keys, data, index keys, attribute names and
/// numbers.
fn item_size(item: &Item) -> usize {
    item.pk.len()
        + item.sk.len()
        + item.data.len()
        + [&item.gsi1, &item.gsi2]
            .into_iter()
            .flatten()
            .map(|k| k.pk.len() + k.sk.len())
            .sum::<usize>()
        + 40
}

impl CountingStore {
    /// Wraps `inner`; `counter` reads what it counts.
    pub fn new(inner: Arc<dyn ItemStore>, counter: &Counter) -> Self {
        Self {
            inner,
            units: counter.0.clone(),
            calls: counter.1.clone(),
        }
    }

    fn request(&self, operation: &'static str, n: u64) {
        *self
            .calls
            .lock()
            .expect("counter lock")
            .requests
            .entry(operation)
            .or_default() += n;
    }

    fn read(&self, operation: &'static str, bytes: usize, consistent: bool) {
        let units = bytes.div_ceil(4096).max(1) as u64;
        let mut calls = self.calls.lock().expect("counter lock");
        *calls.requests.entry(operation).or_default() += 1;
        calls.half_read_units += if consistent { units * 2 } else { units };
    }

    fn charge(&self, item: &Item, times: u64) {
        let size = item_size(item);
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
        let found = self.inner.get(pk, sk, consistent).await?;
        self.read("GetItem", found.as_ref().map_or(0, item_size), consistent);
        Ok(found)
    }
    async fn get_many(
        &self,
        keys: Vec<(String, String)>,
        consistent: bool,
    ) -> Result<Vec<Option<Item>>, StoreError> {
        let found = self.inner.get_many(keys, consistent).await?;
        // One request per 100 keys; each item billed on its own size, rounded up to 4 KB.
        self.request(
            "BatchGetItem",
            found.len().div_ceil(MAX_BATCH_GET_KEYS) as u64,
        );
        let units: u64 = found
            .iter()
            .map(|item| item.as_ref().map_or(0, item_size).div_ceil(4096).max(1) as u64)
            .sum();
        self.calls.lock().expect("counter lock").half_read_units +=
            if consistent { units * 2 } else { units };
        Ok(found)
    }
    async fn put(&self, item: Item, condition: Condition) -> Result<(), StoreError> {
        self.charge(&item, 1);
        self.request("PutItem", 1);
        self.inner.put(item, condition).await
    }
    async fn delete(&self, pk: &str, sk: &str, condition: Condition) -> Result<bool, StoreError> {
        self.charge_key(pk, 1);
        self.request("DeleteItem", 1);
        self.inner.delete(pk, sk, condition).await
    }
    async fn query(&self, query: Query) -> Result<Page, StoreError> {
        let consistent = query.consistent && query.index == Index::Primary;
        let page = self.inner.query(query).await?;
        self.read("Query", page.items.iter().map(item_size).sum(), consistent);
        Ok(page)
    }
    async fn scan(&self, cursor: Option<String>, limit: usize) -> Result<Page, StoreError> {
        let page = self.inner.scan(cursor, limit).await?;
        self.read("Scan", page.items.iter().map(item_size).sum(), false);
        Ok(page)
    }
    async fn transact(&self, ops: Vec<WriteOp>) -> Result<(), StoreError> {
        self.request(
            if ops.len() == 1 && !matches!(ops[0], WriteOp::Check { .. }) {
                "PutItem/DeleteItem (conditional)"
            } else {
                "TransactWriteItems"
            },
            1,
        );
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
        self.request("PutItem/DeleteItem (conditional)", ops.len() as u64);
        for op in &ops {
            match op {
                WriteOp::Put { item, .. } => self.charge(item, 1),
                WriteOp::Delete { pk, .. } | WriteOp::Check { pk, .. } => self.charge_key(pk, 1),
            }
        }
        self.inner.write_each(ops).await
    }
    async fn put_all(&self, items: Vec<Item>) -> Result<(), StoreError> {
        self.request("BatchWriteItem", items.len().div_ceil(25) as u64);
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
        self.request("UpdateItem", 1);
        self.inner.increment(pk, sk, by, expires_at).await
    }
}
