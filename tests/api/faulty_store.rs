//! [`FaultyStore`]: any store, with a test-chosen rule that fails some calls, so tests can show
//! how the service behaves when storage breaks (one write, or everything for a while).

use async_trait::async_trait;
use mailward_domain::store::{Condition, Item, ItemStore, Page, Query, StoreError, WriteOp};
use std::sync::Arc;

/// One store call, as the fault rule sees it.
#[derive(Debug)]
pub enum StoreCall<'a> {
    /// `get` of this key (`pk`, `sk`).
    Get(&'a str, &'a str),
    /// `put` of this item.
    Put(&'a Item),
    /// `delete` of this key (`pk`, `sk`).
    Delete(&'a str, &'a str),
    /// `query`.
    Query,
    /// `transact` of these operations.
    Transact(&'a [WriteOp]),
    /// `increment`.
    Increment,
}

/// Decides whether a call fails (and how).
pub type FaultRule = Box<dyn Fn(&StoreCall<'_>) -> Result<(), StoreError> + Send + Sync>;

/// Forwards every call to `inner` unless `rule` fails it first.
pub struct FaultyStore {
    inner: Arc<dyn ItemStore>,
    rule: FaultRule,
}

impl FaultyStore {
    /// Wraps `inner`.
    pub fn new(inner: Arc<dyn ItemStore>, rule: FaultRule) -> Self {
        Self { inner, rule }
    }
}

impl std::fmt::Debug for FaultyStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FaultyStore").finish_non_exhaustive()
    }
}

#[async_trait]
impl ItemStore for FaultyStore {
    async fn get(&self, pk: &str, sk: &str, consistent: bool) -> Result<Option<Item>, StoreError> {
        (self.rule)(&StoreCall::Get(pk, sk))?;
        self.inner.get(pk, sk, consistent).await
    }
    async fn get_many(
        &self,
        keys: Vec<(String, String)>,
        consistent: bool,
    ) -> Result<Vec<Option<Item>>, StoreError> {
        for (pk, sk) in &keys {
            (self.rule)(&StoreCall::Get(pk, sk))?;
        }
        self.inner.get_many(keys, consistent).await
    }
    async fn put(&self, item: Item, condition: Condition) -> Result<(), StoreError> {
        (self.rule)(&StoreCall::Put(&item))?;
        self.inner.put(item, condition).await
    }
    async fn delete(&self, pk: &str, sk: &str, condition: Condition) -> Result<bool, StoreError> {
        (self.rule)(&StoreCall::Delete(pk, sk))?;
        self.inner.delete(pk, sk, condition).await
    }
    async fn query(&self, query: Query) -> Result<Page, StoreError> {
        (self.rule)(&StoreCall::Query)?;
        self.inner.query(query).await
    }
    async fn scan(&self, cursor: Option<String>, limit: usize) -> Result<Page, StoreError> {
        (self.rule)(&StoreCall::Query)?;
        self.inner.scan(cursor, limit).await
    }
    async fn transact(&self, ops: Vec<WriteOp>) -> Result<(), StoreError> {
        (self.rule)(&StoreCall::Transact(&ops))?;
        self.inner.transact(ops).await
    }
    async fn increment(
        &self,
        pk: &str,
        sk: &str,
        by: i64,
        expires_at: Option<i64>,
    ) -> Result<i64, StoreError> {
        (self.rule)(&StoreCall::Increment)?;
        self.inner.increment(pk, sk, by, expires_at).await
    }
}
