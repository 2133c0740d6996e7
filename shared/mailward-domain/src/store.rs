//! The item-level storage port.
//!
//! Modelled on DynamoDB's single-table shape so both adapters (SQLite locally, DynamoDB on AWS)
//! can honour the same contract: items addressed by a partition key and a sort key, conditional
//! writes, partition and index queries with opaque cursors, all-or-nothing transactions, atomic
//! counters and TTL. Typed repositories sit on top of it (`mailward-store`);
//! no handler talks to this trait directly.
//!
//! Contract details both adapters must follow (checked by the conformance suite in
//! `mailward-testkit`):
//! - An item whose `expires_at` is at or before the store clock's "now" is invisible to `get`,
//!   `query` and conditions (it counts as absent), even if the backend has not reaped it yet.
//! - `version` is opaque to the store except for [`Condition::Version`], which compares it.
//! - A query page may hold fewer than `limit` items while more exist; `cursor` is `Some` whenever
//!   more may follow and is passed back unchanged to continue.

use async_trait::async_trait;

/// Which key a query walks: the table's own (pk, sk) or one of the two secondary indexes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Index {
    /// The primary key (`pk`, `sk`).
    Primary,
    /// Global secondary index 1 (`gsi1pk`, `gsi1sk`).
    Gsi1,
    /// Global secondary index 2 (`gsi2pk`, `gsi2sk`).
    Gsi2,
}

/// A secondary-index key carried by an item.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexKey {
    /// Partition part of the index key.
    pub pk: String,
    /// Sort part of the index key.
    pub sk: String,
}

/// One stored item. `data` is the repository's serialized payload (JSON bytes).
#[derive(Debug, Clone, PartialEq)]
pub struct Item {
    /// Partition key.
    pub pk: String,
    /// Sort key.
    pub sk: String,
    /// Payload bytes; the store never interprets them.
    pub data: Vec<u8>,
    /// Optimistic-concurrency version, compared by [`Condition::Version`].
    pub version: u64,
    /// Unix seconds after which the item no longer exists.
    pub expires_at: Option<i64>,
    /// Optional key in secondary index 1.
    pub gsi1: Option<IndexKey>,
    /// Optional key in secondary index 2.
    pub gsi2: Option<IndexKey>,
    /// Atomic counter value, maintained only by [`ItemStore::increment`].
    pub counter: Option<i64>,
}

impl Item {
    /// A new item with version 1, no TTL, no index keys.
    pub fn new(pk: impl Into<String>, sk: impl Into<String>, data: Vec<u8>) -> Self {
        Self {
            pk: pk.into(),
            sk: sk.into(),
            data,
            version: 1,
            expires_at: None,
            gsi1: None,
            gsi2: None,
            counter: None,
        }
    }

    /// Sets the TTL (Unix seconds).
    pub fn expiring_at(mut self, unix_seconds: i64) -> Self {
        self.expires_at = Some(unix_seconds);
        self
    }

    /// Sets the secondary index 1 key.
    pub fn with_gsi1(mut self, pk: impl Into<String>, sk: impl Into<String>) -> Self {
        self.gsi1 = Some(IndexKey {
            pk: pk.into(),
            sk: sk.into(),
        });
        self
    }

    /// Sets the secondary index 2 key.
    pub fn with_gsi2(mut self, pk: impl Into<String>, sk: impl Into<String>) -> Self {
        self.gsi2 = Some(IndexKey {
            pk: pk.into(),
            sk: sk.into(),
        });
        self
    }

    /// Sets the version.
    pub fn with_version(mut self, version: u64) -> Self {
        self.version = version;
        self
    }
}

/// A precondition on the item currently stored at a key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Condition {
    /// No precondition.
    None,
    /// No (live) item exists at the key.
    NotExists,
    /// A live item exists at the key.
    Exists,
    /// A live item exists and its version equals the given one.
    Version(u64),
}

/// How a query restricts the sort key inside a partition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SortKey {
    /// Every item in the partition.
    All,
    /// Sort keys starting with the prefix.
    Prefix(String),
    /// Sort keys between the bounds, both inclusive.
    Between(String, String),
    /// Sort keys greater than or equal to the bound.
    AtLeast(String),
    /// Sort keys less than or equal to the bound.
    AtMost(String),
}

/// A partition query.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Query {
    /// Which key to walk.
    pub index: Index,
    /// Partition key value (of the chosen index).
    pub pk: String,
    /// Sort-key restriction.
    pub sort: SortKey,
    /// Ascending sort-key order when true.
    pub ascending: bool,
    /// Maximum items per page (the adapter may return fewer).
    pub limit: Option<usize>,
    /// Cursor from a previous page.
    pub cursor: Option<String>,
    /// Strongly consistent read (ignored on secondary indexes, which are eventually consistent).
    pub consistent: bool,
}

impl Query {
    /// Every item of a primary-key partition, ascending.
    pub fn partition(pk: impl Into<String>) -> Self {
        Self {
            index: Index::Primary,
            pk: pk.into(),
            sort: SortKey::All,
            ascending: true,
            limit: None,
            cursor: None,
            consistent: true,
        }
    }

    /// Restricts to sort keys with a prefix.
    pub fn prefix(mut self, prefix: impl Into<String>) -> Self {
        self.sort = SortKey::Prefix(prefix.into());
        self
    }

    /// Walks a secondary index instead of the primary key.
    pub fn on(mut self, index: Index) -> Self {
        self.index = index;
        if index != Index::Primary {
            self.consistent = false;
        }
        self
    }

    /// Descending order.
    pub fn descending(mut self) -> Self {
        self.ascending = false;
        self
    }

    /// Page size.
    pub fn limit(mut self, limit: usize) -> Self {
        self.limit = Some(limit);
        self
    }

    /// Continue after a cursor.
    pub fn after(mut self, cursor: Option<String>) -> Self {
        self.cursor = cursor;
        self
    }
}

/// One page of query results.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Page {
    /// Items in sort-key order.
    pub items: Vec<Item>,
    /// Where the next page starts; `None` when the partition is exhausted.
    pub cursor: Option<String>,
}

/// One write inside a transaction.
#[derive(Debug, Clone, PartialEq)]
pub enum WriteOp {
    /// Put (create or replace) an item if the condition holds.
    Put { item: Item, condition: Condition },
    /// Delete an item if the condition holds.
    Delete {
        pk: String,
        sk: String,
        condition: Condition,
    },
    /// Write nothing, but fail the transaction unless the condition holds.
    Check {
        pk: String,
        sk: String,
        condition: Condition,
    },
}

impl WriteOp {
    /// The (pk, sk) this operation touches.
    pub fn key(&self) -> (&str, &str) {
        match self {
            WriteOp::Put { item, .. } => (&item.pk, &item.sk),
            WriteOp::Delete { pk, sk, .. } | WriteOp::Check { pk, sk, .. } => (pk, sk),
        }
    }
}

/// Keys in one `BatchGetItem` call (DynamoDB's limit).
pub const MAX_BATCH_GET_KEYS: usize = 100;

/// Maximum operations in one transaction (DynamoDB's TransactWriteItems limit).
pub const MAX_TRANSACTION_OPS: usize = 100;

/// Storage failures. Conditions failing are expected outcomes, not faults.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// A conditional put or delete found the item in another state.
    #[error("condition failed")]
    ConditionFailed,
    /// A transaction was rejected whole; `failed` is the index of the first op whose condition
    /// failed, when the backend says.
    #[error("transaction canceled (failed op: {failed:?})")]
    TransactionCanceled { failed: Option<usize> },
    /// The request itself was invalid (too many ops, two ops on one item, bad cursor).
    #[error("invalid store request: {0}")]
    Invalid(String),
    /// The backend failed (I/O, throttling, network). Surfaces as a 5xx.
    #[error("store unavailable: {0}")]
    Unavailable(String),
}

impl StoreError {
    /// Whether the write lost an optimistic race: a condition (version, absence) no longer held
    /// when it was applied, on its own or inside a transaction. The one test every caller uses
    /// to tell "read again and decide" from a real failure.
    pub fn is_conflict(&self) -> bool {
        matches!(
            self,
            StoreError::ConditionFailed | StoreError::TransactionCanceled { .. }
        )
    }
}

/// The item store port. See the module docs for the contract.
#[async_trait]
pub trait ItemStore: Send + Sync {
    /// Reads one item; `consistent` asks for a strongly consistent read.
    async fn get(&self, pk: &str, sk: &str, consistent: bool) -> Result<Option<Item>, StoreError>;

    /// Reads several items by key, answering in the order asked (`None` for a missing or
    /// expired item; a key asked twice is answered twice). One round trip where the backend
    /// allows: `DynamoStore` sends `BatchGetItem` calls of up to [`MAX_BATCH_GET_KEYS`] keys
    /// (sending unprocessed keys again), SQLite reads them in one hop to its connection. Not a
    /// snapshot: each item is read on its own (strongly consistent when asked). The default
    /// reads them one by one.
    async fn get_many(
        &self,
        keys: Vec<(String, String)>,
        consistent: bool,
    ) -> Result<Vec<Option<Item>>, StoreError> {
        let mut found = Vec::with_capacity(keys.len());
        for (pk, sk) in &keys {
            found.push(self.get(pk, sk, consistent).await?);
        }
        Ok(found)
    }

    /// Writes an item if `condition` holds.
    async fn put(&self, item: Item, condition: Condition) -> Result<(), StoreError>;

    /// Deletes an item if `condition` holds. Returns whether a live item was deleted.
    async fn delete(&self, pk: &str, sk: &str, condition: Condition) -> Result<bool, StoreError>;

    /// One page of a partition or index query.
    async fn query(&self, query: Query) -> Result<Page, StoreError>;

    /// Applies every op or none. At most [`MAX_TRANSACTION_OPS`] ops, each on a distinct item.
    async fn transact(&self, ops: Vec<WriteOp>) -> Result<(), StoreError>;

    /// Writes every item unconditionally and **not** atomically: when the call fails, some may
    /// be written. For idempotent bulk writes (a report's row chunks, marked complete by a
    /// later conditional write), where a transaction's guarantee is not needed: DynamoDB bills a
    /// transactional write twice and its throttling cancels the whole transaction, while a
    /// batch write is billed once and retried item by item (`DynamoStore` uses
    /// `BatchWriteItem` and backs off on unprocessed items; SQLite writes them in one
    /// transaction). Items must have distinct keys. The default puts them one by one.
    async fn put_all(&self, items: Vec<Item>) -> Result<(), StoreError> {
        for item in items {
            self.put(item, Condition::None).await?;
        }
        Ok(())
    }

    /// Applies each op on its own, not atomically together: an op whose condition fails is
    /// skipped and the others still apply. Returns, in order, whether each op applied; an
    /// error only for a backend failure (some ops may have applied then). For many independent
    /// versioned writes (a domain's senders after identification): one conflict costs one item,
    /// not a transaction's worth, and DynamoDB bills each once instead of twice (`DynamoStore`
    /// sends each as its own conditional write, several at a time; SQLite checks each in one
    /// transaction). Ops must touch distinct items. The default runs them one by one.
    async fn write_each(&self, ops: Vec<WriteOp>) -> Result<Vec<bool>, StoreError> {
        let mut applied = Vec::with_capacity(ops.len());
        for op in ops {
            match self.transact(vec![op]).await {
                Ok(()) => applied.push(true),
                Err(e) if e.is_conflict() => applied.push(false),
                Err(e) => return Err(e),
            }
        }
        Ok(applied)
    }

    /// Atomically adds `by` to the counter at the key (creating it at 0) and returns the new
    /// value. `expires_at` is set when the item is created and left alone afterwards, so a
    /// fixed rate-limit window keeps its end. A counter past its TTL starts again from 0.
    async fn increment(
        &self,
        pk: &str,
        sk: &str,
        by: i64,
        expires_at: Option<i64>,
    ) -> Result<i64, StoreError>;

    /// One page of the whole table, live items only, in no promised order: for an operator's
    /// walk (a purge's proof, a migration), never a request path. `cursor` continues a scan.
    async fn scan(&self, cursor: Option<String>, limit: usize) -> Result<Page, StoreError>;
}

/// Every live item of the table ([`ItemStore::scan`] page after page): tests and operators.
pub async fn scan_all(store: &dyn ItemStore) -> Result<Vec<Item>, StoreError> {
    let mut out = Vec::new();
    let mut cursor = None;
    loop {
        let page = store.scan(cursor, 500).await?;
        out.extend(page.items);
        match page.cursor {
            Some(next) => cursor = Some(next),
            None => return Ok(out),
        }
    }
}

/// Reads every page of a query. For partitions known to be small (an organization's keys,
/// members); large walks should page explicitly.
pub async fn query_all(store: &dyn ItemStore, mut query: Query) -> Result<Vec<Item>, StoreError> {
    let mut out = Vec::new();
    loop {
        let page = store.query(query.clone()).await?;
        out.extend(page.items);
        match page.cursor {
            Some(cursor) => query.cursor = Some(cursor),
            None => return Ok(out),
        }
    }
}
