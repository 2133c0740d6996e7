//! [`ItemStore`] over one DynamoDB table.
//!
//! Contract points and how they are met here:
//! - Expiry: DynamoDB's TTL reaper is lazy, so every read filters on `ttl > now` and every
//!   condition treats an expired item as absent (see [`expr`]). "Now" is the injected clock.
//! - Query pages: `Limit` applies before the expiry filter, so a page may be short (allowed by
//!   the contract); the cursor is the encoded `LastEvaluatedKey`.
//! - Transactions map to `TransactWriteItems`; limits are checked before calling AWS.
//! - Secondary indexes are eventually consistent on AWS: `consistent` only applies to the table.
//! - DynamoDB refuses empty strings as key values (table or index): writes with one fail as
//!   [`StoreError::Invalid`] before calling AWS, and reads of such a key find nothing.

mod codec;
mod expr;
mod pace;
mod table;

pub use table::create_table;

use async_trait::async_trait;
use aws_sdk_dynamodb::error::DisplayErrorContext;
use aws_sdk_dynamodb::operation::transact_write_items::TransactWriteItemsError;
use aws_sdk_dynamodb::types::{ConditionCheck, Delete, Put, ReturnValue, TransactWriteItem};
use codec::{Attrs, COUNTER, PK, TTL, VERSION, from_attrs, is_live, key, n, number, to_attrs};
use expr::Expr;
use mailward_domain::Clock;
use mailward_domain::store::{
    Condition, Item, ItemStore, MAX_BATCH_GET_KEYS, MAX_TRANSACTION_OPS, Page, Query, StoreError,
    WriteOp,
};
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

/// How often `increment` retries when it races other writers restarting an expired counter.
const INCREMENT_ATTEMPTS: usize = 5;

/// `BatchGetItem` calls `get_many` keeps in flight.
const BATCH_GETS_IN_FLIGHT: usize = 4;

/// Conditional writes `write_each` keeps in flight.
const WRITE_EACH_IN_FLIGHT: usize = 16;

/// Items in one `BatchWriteItem` call (DynamoDB's limit).
const BATCH_WRITE_ITEMS: usize = 25;

/// Calls `put_all` (`get_many`) makes for one batch's unprocessed items (keys) before giving
/// up, backing off from 50 ms doubling to 3.2 s (about 6 s in all): a partition written (read)
/// past its budget answers with unprocessed items, and the wait lets the budget refill.
const BATCH_ATTEMPTS: u32 = 8;

/// The item store on AWS: one table, keys and indexes as described in [`create_table`].
#[derive(Debug, Clone)]
pub struct DynamoStore {
    client: aws_sdk_dynamodb::Client,
    table: String,
    clock: Arc<dyn Clock>,
}

impl DynamoStore {
    /// A store over `table`, judging TTLs by `clock` (a manual clock in tests, so expiry can be
    /// checked without waiting; moto never reaps expired items).
    pub fn new(client: aws_sdk_dynamodb::Client, table: String, clock: Arc<dyn Clock>) -> Self {
        Self {
            client,
            table,
            clock,
        }
    }

    /// Adds `by` to a live or missing counter; `None` when the counter exists but has expired.
    async fn add_to_counter(
        &self,
        pk: &str,
        sk: &str,
        by: i64,
        expires_at: Option<i64>,
        now: i64,
    ) -> Result<Option<i64>, StoreError> {
        let mut update = "ADD #n :by SET #v = if_not_exists(#v, :one)".to_owned();
        let mut values: Attrs = [(":by", n(by)), (":one", n(1)), (":now", n(now))]
            .into_iter()
            .map(|(k, v)| (k.to_owned(), v))
            .collect();
        if let Some(ttl) = expires_at {
            update.push_str(", #ttl = if_not_exists(#ttl, :ttl)");
            values.insert(":ttl".to_owned(), n(ttl));
        }
        let names = [("#n", COUNTER), ("#v", VERSION), ("#ttl", TTL), ("#pk", PK)]
            .into_iter()
            .map(|(k, v)| (k.to_owned(), v.to_owned()))
            .collect();
        let result = self
            .client
            .update_item()
            .table_name(&self.table)
            .set_key(Some(key(pk, sk)))
            .update_expression(update)
            .condition_expression(
                "attribute_not_exists(#pk) OR attribute_not_exists(#ttl) OR #ttl > :now",
            )
            .set_expression_attribute_names(Some(names))
            .set_expression_attribute_values(Some(values))
            .return_values(ReturnValue::UpdatedNew)
            .send()
            .await;
        match result {
            Ok(out) => {
                let attrs = out.attributes.unwrap_or_default();
                let value = number(&attrs, COUNTER)?.ok_or_else(|| {
                    StoreError::Unavailable("UpdateItem returned no counter".into())
                })?;
                Ok(Some(value))
            }
            Err(e)
                if e.as_service_error()
                    .is_some_and(|e| e.is_conditional_check_failed_exception()) =>
            {
                Ok(None)
            }
            Err(e) => Err(unavailable("UpdateItem", &e)),
        }
    }

    /// Replaces an expired counter with a fresh one holding `by`; false when another writer got
    /// there first (the item is no longer expired).
    async fn restart_counter(
        &self,
        pk: &str,
        sk: &str,
        by: i64,
        expires_at: Option<i64>,
        now: i64,
    ) -> Result<bool, StoreError> {
        let mut item = Item::new(pk, sk, Vec::new());
        item.counter = Some(by);
        item.expires_at = expires_at;
        let result = self
            .client
            .put_item()
            .table_name(&self.table)
            .set_item(Some(to_attrs(item)))
            .condition_expression("#ttl <= :now")
            .expression_attribute_names("#ttl", TTL)
            .expression_attribute_values(":now", n(now))
            .send()
            .await;
        match result {
            Ok(_) => Ok(true),
            Err(e)
                if e.as_service_error()
                    .is_some_and(|e| e.is_conditional_check_failed_exception()) =>
            {
                Ok(false)
            }
            Err(e) => Err(unavailable("PutItem", &e)),
        }
    }

    /// One `BatchWriteItem` of at most [`BATCH_WRITE_ITEMS`] puts, its unprocessed items sent
    /// again with backoff.
    async fn batch_put(&self, items: Vec<Item>) -> Result<(), StoreError> {
        use aws_sdk_dynamodb::types::{PutRequest, WriteRequest};
        let built = |e: aws_sdk_dynamodb::error::BuildError| StoreError::Invalid(e.to_string());
        let mut pending = items
            .into_iter()
            .map(|item| {
                let put = PutRequest::builder()
                    .set_item(Some(to_attrs(item)))
                    .build()
                    .map_err(built)?;
                Ok(WriteRequest::builder().put_request(put).build())
            })
            .collect::<Result<Vec<_>, StoreError>>()?;
        for attempt in 0..BATCH_ATTEMPTS {
            back_off(attempt).await;
            let out = self
                .client
                .batch_write_item()
                .request_items(&self.table, pending)
                .send()
                .await
                .map_err(|e| unavailable("BatchWriteItem", &e))?;
            pending = out
                .unprocessed_items
                .and_then(|mut by_table| by_table.remove(&self.table))
                .unwrap_or_default();
            if pending.is_empty() {
                return Ok(());
            }
        }
        Err(StoreError::Unavailable(format!(
            "DynamoDB BatchWriteItem: {} items still unprocessed after {BATCH_ATTEMPTS} attempts",
            pending.len()
        )))
    }

    /// The live items among `keys` (at most [`MAX_BATCH_GET_KEYS`], distinct, valid), by one
    /// `BatchGetItem` and its unprocessed keys sent again with backoff.
    async fn batch_get(
        &self,
        keys: Vec<(String, String)>,
        consistent: bool,
    ) -> Result<Vec<Item>, StoreError> {
        use aws_sdk_dynamodb::types::KeysAndAttributes;
        let built = |e: aws_sdk_dynamodb::error::BuildError| StoreError::Invalid(e.to_string());
        let mut pending = KeysAndAttributes::builder()
            .set_keys(Some(keys.iter().map(|(pk, sk)| key(pk, sk)).collect()))
            .consistent_read(consistent)
            .build()
            .map_err(built)?;
        let mut found = Vec::with_capacity(keys.len());
        let now = self.clock.unix();
        for attempt in 0..BATCH_ATTEMPTS {
            back_off(attempt).await;
            let out = self
                .client
                .batch_get_item()
                .request_items(&self.table, pending)
                .send()
                .await
                .map_err(|e| unavailable("BatchGetItem", &e))?;
            for attrs in out
                .responses
                .and_then(|mut by_table| by_table.remove(&self.table))
                .unwrap_or_default()
            {
                if is_live(&attrs, now)? {
                    found.push(from_attrs(&attrs)?);
                }
            }
            match out
                .unprocessed_keys
                .and_then(|mut by_table| by_table.remove(&self.table))
            {
                Some(rest) if !rest.keys.is_empty() => pending = rest,
                _ => return Ok(found),
            }
        }
        Err(StoreError::Unavailable(format!(
            "DynamoDB BatchGetItem: keys still unprocessed after {BATCH_ATTEMPTS} attempts"
        )))
    }

    /// One op as its own conditional write: a transaction of one op gives no more than that
    /// and costs twice the write units. A failed condition is still the transaction's
    /// cancellation of op 0.
    async fn write_one(&self, op: WriteOp) -> Result<(), StoreError> {
        let outcome = match op {
            WriteOp::Put { item, condition } => self.put(item, condition).await,
            WriteOp::Delete { pk, sk, condition } => {
                self.delete(&pk, &sk, condition).await.map(|_| ())
            }
            WriteOp::Check { .. } => {
                return Err(StoreError::Invalid("a check alone writes nothing".into()));
            }
        };
        outcome.map_err(|e| match e {
            StoreError::ConditionFailed => StoreError::TransactionCanceled { failed: Some(0) },
            other => other,
        })
    }

    fn transact_item(&self, op: WriteOp, now: i64) -> Result<TransactWriteItem, StoreError> {
        let built = |e: aws_sdk_dynamodb::error::BuildError| StoreError::Invalid(e.to_string());
        let item = match op {
            WriteOp::Put { item, condition } => {
                let cond = expr::condition(condition, now);
                let put = Put::builder()
                    .table_name(&self.table)
                    .set_item(Some(to_attrs(item)))
                    .set_condition_expression(cond.as_ref().map(|c| c.text.clone()))
                    .set_expression_attribute_names(cond.as_ref().and_then(Expr::names))
                    .set_expression_attribute_values(cond.as_ref().and_then(Expr::values))
                    .build()
                    .map_err(built)?;
                TransactWriteItem::builder().put(put)
            }
            WriteOp::Delete { pk, sk, condition } => {
                let cond = expr::condition(condition, now);
                let delete = Delete::builder()
                    .table_name(&self.table)
                    .set_key(Some(key(&pk, &sk)))
                    .set_condition_expression(cond.as_ref().map(|c| c.text.clone()))
                    .set_expression_attribute_names(cond.as_ref().and_then(Expr::names))
                    .set_expression_attribute_values(cond.as_ref().and_then(Expr::values))
                    .build()
                    .map_err(built)?;
                TransactWriteItem::builder().delete(delete)
            }
            WriteOp::Check { pk, sk, condition } => {
                let cond = expr::check_condition(condition, now);
                let check = ConditionCheck::builder()
                    .table_name(&self.table)
                    .set_key(Some(key(&pk, &sk)))
                    .condition_expression(cond.text.clone())
                    .set_expression_attribute_names(cond.names())
                    .set_expression_attribute_values(cond.values())
                    .build()
                    .map_err(built)?;
                TransactWriteItem::builder().condition_check(check)
            }
        };
        Ok(item.build())
    }
}

/// Refuses empty key strings, which DynamoDB rejects with a validation error.
/// Waits before a batch call's `attempt` (none before the first): 50 ms, doubling.
async fn back_off(attempt: u32) {
    if attempt > 0 {
        tokio::time::sleep(std::time::Duration::from_millis(50 << (attempt - 1))).await;
    }
}

fn check_key(pk: &str, sk: &str) -> Result<(), StoreError> {
    if pk.is_empty() || sk.is_empty() {
        return Err(StoreError::Invalid(format!(
            "empty key part in ({pk:?}, {sk:?})"
        )));
    }
    Ok(())
}

/// [`check_key`] for an item's own key and its index keys.
fn check_item_keys(item: &Item) -> Result<(), StoreError> {
    check_key(&item.pk, &item.sk)?;
    for index_key in [&item.gsi1, &item.gsi2].into_iter().flatten() {
        check_key(&index_key.pk, &index_key.sk)?;
    }
    Ok(())
}

/// [`check_key`] for every item a transaction writes or checks.
fn check_op_keys(op: &WriteOp) -> Result<(), StoreError> {
    match op {
        WriteOp::Put { item, .. } => check_item_keys(item),
        WriteOp::Delete { pk, sk, .. } | WriteOp::Check { pk, sk, .. } => check_key(pk, sk),
    }
}

fn unavailable<E: std::error::Error + 'static>(op: &str, err: &E) -> StoreError {
    StoreError::Unavailable(format!("DynamoDB {op}: {}", DisplayErrorContext(err)))
}

/// Maps a rejected `TransactWriteItems` to the port's error: a failed condition names its op;
/// a conflict with a concurrent transaction is a cancellation without one; anything else
/// (throttling, validation) is a backend failure.
fn transaction_error(
    err: aws_sdk_dynamodb::error::SdkError<
        TransactWriteItemsError,
        aws_sdk_dynamodb::config::http::HttpResponse,
    >,
) -> StoreError {
    let Some(TransactWriteItemsError::TransactionCanceledException(canceled)) =
        err.as_service_error()
    else {
        return unavailable("TransactWriteItems", &err);
    };
    let codes: Vec<&str> = canceled
        .cancellation_reasons()
        .iter()
        .map(|r| r.code().unwrap_or("None"))
        .collect();
    if let Some(failed) = codes.iter().position(|c| *c == "ConditionalCheckFailed") {
        return StoreError::TransactionCanceled {
            failed: Some(failed),
        };
    }
    if codes
        .iter()
        .all(|c| matches!(*c, "None" | "TransactionConflict"))
    {
        return StoreError::TransactionCanceled { failed: None };
    }
    StoreError::Unavailable(format!("DynamoDB TransactWriteItems canceled: {codes:?}"))
}

#[async_trait]
impl ItemStore for DynamoStore {
    async fn get(&self, pk: &str, sk: &str, consistent: bool) -> Result<Option<Item>, StoreError> {
        if check_key(pk, sk).is_err() {
            return Ok(None);
        }
        let out = self
            .client
            .get_item()
            .table_name(&self.table)
            .set_key(Some(key(pk, sk)))
            .consistent_read(consistent)
            .send()
            .await
            .map_err(|e| unavailable("GetItem", &e))?;
        match out.item {
            Some(attrs) if is_live(&attrs, self.clock.unix())? => Ok(Some(from_attrs(&attrs)?)),
            _ => Ok(None),
        }
    }

    async fn get_many(
        &self,
        keys: Vec<(String, String)>,
        consistent: bool,
    ) -> Result<Vec<Option<Item>>, StoreError> {
        use futures::{StreamExt as _, TryStreamExt as _};
        // Distinct, valid keys only: BatchGetItem refuses a key asked twice or an empty one.
        let mut distinct: Vec<(String, String)> = Vec::new();
        let mut seen = HashSet::new();
        for (pk, sk) in &keys {
            if check_key(pk, sk).is_ok() && seen.insert((pk.as_str(), sk.as_str())) {
                distinct.push((pk.clone(), sk.clone()));
            }
        }
        let chunks: Vec<Vec<(String, String)>> = distinct
            .chunks(MAX_BATCH_GET_KEYS)
            .map(<[_]>::to_vec)
            .collect();
        let batches: Vec<Vec<Item>> = futures::stream::iter(chunks)
            .map(|chunk| self.batch_get(chunk, consistent))
            .buffer_unordered(BATCH_GETS_IN_FLIGHT)
            .try_collect()
            .await?;
        let mut by_key: HashMap<(String, String), Item> = batches
            .into_iter()
            .flatten()
            .map(|item| ((item.pk.clone(), item.sk.clone()), item))
            .collect();
        let mut asks: HashMap<&(String, String), usize> = HashMap::new();
        for k in &keys {
            *asks.entry(k).or_default() += 1;
        }
        let mut out = Vec::with_capacity(keys.len());
        for k in &keys {
            // The last ask of a key takes the item; earlier asks clone it.
            let left = asks.get_mut(k).map(|n| {
                *n -= 1;
                *n
            });
            out.push(if left == Some(0) {
                by_key.remove(k)
            } else {
                by_key.get(k).cloned()
            });
        }
        Ok(out)
    }

    async fn put(&self, item: Item, condition: Condition) -> Result<(), StoreError> {
        check_item_keys(&item)?;
        let cond = expr::condition(condition, self.clock.unix());
        let result = self
            .client
            .put_item()
            .table_name(&self.table)
            .set_item(Some(to_attrs(item)))
            .set_condition_expression(cond.as_ref().map(|c| c.text.clone()))
            .set_expression_attribute_names(cond.as_ref().and_then(Expr::names))
            .set_expression_attribute_values(cond.as_ref().and_then(Expr::values))
            .send()
            .await;
        match result {
            Ok(_) => Ok(()),
            Err(e)
                if e.as_service_error()
                    .is_some_and(|e| e.is_conditional_check_failed_exception()) =>
            {
                Err(StoreError::ConditionFailed)
            }
            Err(e) => Err(unavailable("PutItem", &e)),
        }
    }

    async fn delete(&self, pk: &str, sk: &str, condition: Condition) -> Result<bool, StoreError> {
        check_key(pk, sk)?;
        let now = self.clock.unix();
        let cond = expr::condition(condition, now);
        let result = self
            .client
            .delete_item()
            .table_name(&self.table)
            .set_key(Some(key(pk, sk)))
            .set_condition_expression(cond.as_ref().map(|c| c.text.clone()))
            .set_expression_attribute_names(cond.as_ref().and_then(Expr::names))
            .set_expression_attribute_values(cond.as_ref().and_then(Expr::values))
            .return_values(ReturnValue::AllOld)
            .send()
            .await;
        match result {
            Ok(out) => match out.attributes {
                Some(old) if !old.is_empty() => is_live(&old, now),
                _ => Ok(false),
            },
            Err(e)
                if e.as_service_error()
                    .is_some_and(|e| e.is_conditional_check_failed_exception()) =>
            {
                Err(StoreError::ConditionFailed)
            }
            Err(e) => Err(unavailable("DeleteItem", &e)),
        }
    }

    async fn query(&self, query: Query) -> Result<Page, StoreError> {
        if query.pk.is_empty() {
            return Ok(Page::default());
        }
        let start = match &query.cursor {
            Some(cursor) => Some(codec::decode_cursor(cursor, query.index, &query.pk)?),
            None => None,
        };
        let Some(key_condition) = expr::key_condition(query.index, &query.pk, &query.sort) else {
            return Ok(Page::default());
        };
        let filter = expr::live_filter(self.clock.unix());
        let placeholders = expr::merged(&[&key_condition, &filter]);
        let (index_name, _, _) = codec::key_attrs(query.index);
        let limit = query
            .limit
            .map(|l| i32::try_from(l.max(1)).unwrap_or(i32::MAX));
        let out = self
            .client
            .query()
            .table_name(&self.table)
            .set_index_name(index_name.map(str::to_owned))
            .key_condition_expression(key_condition.text)
            .filter_expression(filter.text)
            .set_expression_attribute_names(placeholders.names())
            .set_expression_attribute_values(placeholders.values())
            .scan_index_forward(query.ascending)
            .set_limit(limit)
            .set_exclusive_start_key(start)
            .consistent_read(query.consistent && index_name.is_none())
            .send()
            .await
            .map_err(|e| unavailable("Query", &e))?;
        let items = out
            .items()
            .iter()
            .map(from_attrs)
            .collect::<Result<Vec<_>, _>>()?;
        let cursor = match out.last_evaluated_key() {
            Some(last) if !last.is_empty() => Some(codec::encode_cursor(last)?),
            _ => None,
        };
        Ok(Page { items, cursor })
    }

    async fn scan(&self, cursor: Option<String>, limit: usize) -> Result<Page, StoreError> {
        let start = match &cursor {
            Some(c) => Some(codec::decode_scan_cursor(c)?),
            None => None,
        };
        let filter = expr::live_filter(self.clock.unix());
        let out = self
            .client
            .scan()
            .table_name(&self.table)
            .filter_expression(filter.text.clone())
            .set_expression_attribute_names(filter.names())
            .set_expression_attribute_values(filter.values())
            .set_limit(Some(i32::try_from(limit.clamp(1, 10_000)).unwrap_or(1)))
            .set_exclusive_start_key(start)
            .send()
            .await
            .map_err(|e| unavailable("Scan", &e))?;
        let items = out
            .items()
            .iter()
            .map(from_attrs)
            .collect::<Result<Vec<_>, _>>()?;
        let cursor = match out.last_evaluated_key() {
            Some(last) if !last.is_empty() => Some(codec::encode_cursor(last)?),
            _ => None,
        };
        Ok(Page { items, cursor })
    }

    async fn transact(&self, ops: Vec<WriteOp>) -> Result<(), StoreError> {
        if ops.len() > MAX_TRANSACTION_OPS {
            return Err(StoreError::Invalid(format!(
                "{} operations in one transaction (at most {MAX_TRANSACTION_OPS})",
                ops.len()
            )));
        }
        let mut keys = HashSet::new();
        if let Some(op) = ops.iter().find(|op| !keys.insert(op.key())) {
            let (pk, sk) = op.key();
            return Err(StoreError::Invalid(format!(
                "two operations on item ({pk}, {sk})"
            )));
        }
        ops.iter().try_for_each(check_op_keys)?;
        if ops.is_empty() {
            return Ok(());
        }
        if let [WriteOp::Put { .. } | WriteOp::Delete { .. }] = ops.as_slice() {
            let op = ops.into_iter().next().expect("one op");
            return self.write_one(op).await;
        }
        let now = self.clock.unix();
        let items = ops
            .into_iter()
            .map(|op| self.transact_item(op, now))
            .collect::<Result<Vec<_>, _>>()?;
        self.client
            .transact_write_items()
            .set_transact_items(Some(items))
            .send()
            .await
            .map_err(transaction_error)?;
        Ok(())
    }

    async fn write_each(&self, ops: Vec<WriteOp>) -> Result<Vec<bool>, StoreError> {
        use futures::StreamExt as _;
        let mut keys = HashSet::new();
        if let Some(op) = ops.iter().find(|op| !keys.insert(op.key())) {
            let (pk, sk) = op.key();
            return Err(StoreError::Invalid(format!(
                "two operations on item ({pk}, {sk})"
            )));
        }
        ops.iter().try_for_each(check_op_keys)?;
        let pacer = std::sync::Mutex::new(pace::KeyPacer::new());
        let outcomes: Vec<Result<(), StoreError>> = futures::stream::iter(ops)
            .map(|op| {
                let wait = {
                    let mut pacer = pacer
                        .lock()
                        .unwrap_or_else(std::sync::PoisonError::into_inner);
                    match &op {
                        WriteOp::Put { item, .. } => pacer.admit(&item.pk, pace::units(item)),
                        WriteOp::Delete { pk, .. } | WriteOp::Check { pk, .. } => {
                            pacer.admit(pk, 1.0)
                        }
                    }
                };
                async move {
                    if !wait.is_zero() {
                        tokio::time::sleep(wait).await;
                    }
                    self.transact(vec![op]).await
                }
            })
            .buffered(WRITE_EACH_IN_FLIGHT)
            .collect()
            .await;
        outcomes
            .into_iter()
            .map(|outcome| match outcome {
                Ok(()) => Ok(true),
                Err(e) if e.is_conflict() => Ok(false),
                Err(e) => Err(e),
            })
            .collect()
    }

    async fn put_all(&self, items: Vec<Item>) -> Result<(), StoreError> {
        let mut keys = HashSet::new();
        if let Some(item) = items.iter().find(|i| !keys.insert((&i.pk, &i.sk))) {
            return Err(StoreError::Invalid(format!(
                "two puts of item ({}, {})",
                item.pk, item.sk
            )));
        }
        items.iter().try_for_each(check_item_keys)?;
        let mut pacer = pace::KeyPacer::new();
        let mut items = items.into_iter().peekable();
        while items.peek().is_some() {
            let batch: Vec<Item> = items.by_ref().take(BATCH_WRITE_ITEMS).collect();
            let wait = batch
                .iter()
                .map(|item| pacer.admit(&item.pk, pace::units(item)))
                .max()
                .unwrap_or_default();
            if !wait.is_zero() {
                tokio::time::sleep(wait).await;
            }
            self.batch_put(batch).await?;
        }
        Ok(())
    }

    async fn increment(
        &self,
        pk: &str,
        sk: &str,
        by: i64,
        expires_at: Option<i64>,
    ) -> Result<i64, StoreError> {
        check_key(pk, sk)?;
        for _ in 0..INCREMENT_ATTEMPTS {
            let now = self.clock.unix();
            if let Some(value) = self.add_to_counter(pk, sk, by, expires_at, now).await? {
                return Ok(value);
            }
            if self.restart_counter(pk, sk, by, expires_at, now).await? {
                return Ok(by);
            }
        }
        Err(StoreError::Unavailable(format!(
            "counter ({pk}, {sk}) still contended after {INCREMENT_ATTEMPTS} attempts"
        )))
    }
}
