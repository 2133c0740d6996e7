//! [`ItemStore`] on SQLite.

use crate::database::Database;
use async_trait::async_trait;
use base64::Engine as _;
use mailward_domain::Clock;
use mailward_domain::store::{
    Condition, Index, IndexKey, Item, ItemStore, MAX_TRANSACTION_OPS, Page, Query, SortKey,
    StoreError, WriteOp,
};
use rusqlite::{Connection, OptionalExtension, params};
use std::collections::HashSet;
use std::sync::Arc;

/// The embedded item store. Cheap to clone.
#[derive(Clone, Debug)]
pub struct EmbeddedStore {
    db: Database,
    clock: Arc<dyn Clock>,
}

impl EmbeddedStore {
    /// A store over `db`, judging TTLs by `clock`.
    pub fn new(db: Database, clock: Arc<dyn Clock>) -> Self {
        Self { db, clock }
    }
}

const COLUMNS: &str = "pk, sk, data, version, expires_at, gsi1pk, gsi1sk, gsi2pk, gsi2sk, counter";

fn row_to_item(row: &rusqlite::Row<'_>) -> rusqlite::Result<Item> {
    let index = |pk: Option<String>, sk: Option<String>| match (pk, sk) {
        (Some(pk), Some(sk)) => Some(IndexKey { pk, sk }),
        _ => None,
    };
    Ok(Item {
        pk: row.get(0)?,
        sk: row.get(1)?,
        data: row.get(2)?,
        version: u64::try_from(row.get::<_, i64>(3)?).unwrap_or(0),
        expires_at: row.get(4)?,
        gsi1: index(row.get(5)?, row.get(6)?),
        gsi2: index(row.get(7)?, row.get(8)?),
        counter: row.get(9)?,
    })
}

fn unavailable(e: rusqlite::Error) -> StoreError {
    StoreError::Unavailable(e.to_string())
}

/// The live version at a key, `None` when absent or expired.
fn live_version(
    conn: &Connection,
    pk: &str,
    sk: &str,
    now: i64,
) -> Result<Option<u64>, StoreError> {
    conn.prepare_cached("SELECT version FROM items WHERE pk = ?1 AND sk = ?2 AND (expires_at IS NULL OR expires_at > ?3)")
                    .map_err(unavailable)?
                    .query_row(params![pk, sk, now],
        |row| row.get::<_, i64>(0),
    )
    .optional()
    .map(|v| v.map(|v| u64::try_from(v).unwrap_or(0)))
    .map_err(unavailable)
}

fn condition_holds(current: Option<u64>, condition: Condition) -> bool {
    match condition {
        Condition::None => true,
        Condition::NotExists => current.is_none(),
        Condition::Exists => current.is_some(),
        Condition::Version(v) => current == Some(v),
    }
}

fn write_item(conn: &Connection, item: &Item) -> Result<(), StoreError> {
    let (g1pk, g1sk) = split_index(item.gsi1.as_ref());
    let (g2pk, g2sk) = split_index(item.gsi2.as_ref());
    conn.prepare_cached("INSERT OR REPLACE INTO items (pk, sk, data, version, expires_at, gsi1pk, gsi1sk, gsi2pk, gsi2sk, counter)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)")
                    .map_err(unavailable)?
                    .execute(params![
            item.pk,
            item.sk,
            item.data,
            i64::try_from(item.version).unwrap_or(i64::MAX),
            item.expires_at,
            g1pk,
            g1sk,
            g2pk,
            g2sk,
            item.counter
        ],
    )
    .map_err(unavailable)?;
    Ok(())
}

fn split_index(key: Option<&IndexKey>) -> (Option<&str>, Option<&str>) {
    match key {
        Some(k) => (Some(k.pk.as_str()), Some(k.sk.as_str())),
        None => (None, None),
    }
}

fn apply(conn: &Connection, op: &WriteOp, now: i64) -> Result<bool, StoreError> {
    let (pk, sk) = op.key();
    let condition = match op {
        WriteOp::Put { condition, .. }
        | WriteOp::Delete { condition, .. }
        | WriteOp::Check { condition, .. } => *condition,
    };
    // An unconditional write need not read what it replaces (most of a report's rows).
    if condition != Condition::None && !condition_holds(live_version(conn, pk, sk, now)?, condition)
    {
        return Ok(false);
    }
    match op {
        WriteOp::Put { item, .. } => write_item(conn, item)?,
        WriteOp::Delete { pk, sk, .. } => {
            conn.prepare_cached("DELETE FROM items WHERE pk = ?1 AND sk = ?2")
                .map_err(unavailable)?
                .execute(params![pk, sk])
                .map_err(unavailable)?;
        }
        WriteOp::Check { .. } => {}
    }
    Ok(true)
}

/// Cursor: the sort position of the last returned item, base64url JSON.
fn encode_cursor(parts: &[&str]) -> String {
    let json = serde_json::to_vec(parts).unwrap_or_default();
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(json)
}

fn decode_cursor(cursor: &str, expected_parts: usize) -> Result<Vec<String>, StoreError> {
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(cursor)
        .map_err(|_| StoreError::Invalid("malformed cursor".into()))?;
    let parts: Vec<String> = serde_json::from_slice(&bytes)
        .map_err(|_| StoreError::Invalid("malformed cursor".into()))?;
    if parts.len() != expected_parts {
        return Err(StoreError::Invalid("malformed cursor".into()));
    }
    Ok(parts)
}

/// Upper bound for a prefix range: keys never contain U+10FFFF.
fn prefix_end(prefix: &str) -> String {
    format!("{prefix}\u{10FFFF}")
}

fn run_query(conn: &Connection, q: &Query, now: i64) -> Result<Page, StoreError> {
    let (pk_col, sk_col) = match q.index {
        Index::Primary => ("pk", "sk"),
        Index::Gsi1 => ("gsi1pk", "gsi1sk"),
        Index::Gsi2 => ("gsi2pk", "gsi2sk"),
    };
    let mut sql = format!(
        "SELECT {COLUMNS} FROM items WHERE {pk_col} = ? AND (expires_at IS NULL OR expires_at > ?)"
    );
    let mut args: Vec<rusqlite::types::Value> = vec![q.pk.clone().into(), now.into()];
    match &q.sort {
        SortKey::All => {}
        SortKey::Prefix(p) => {
            sql.push_str(&format!(" AND {sk_col} >= ? AND {sk_col} < ?"));
            args.push(p.clone().into());
            args.push(prefix_end(p).into());
        }
        SortKey::Between(a, b) => {
            sql.push_str(&format!(" AND {sk_col} BETWEEN ? AND ?"));
            args.push(a.clone().into());
            args.push(b.clone().into());
        }
        SortKey::AtLeast(a) => {
            sql.push_str(&format!(" AND {sk_col} >= ?"));
            args.push(a.clone().into());
        }
        SortKey::AtMost(b) => {
            sql.push_str(&format!(" AND {sk_col} <= ?"));
            args.push(b.clone().into());
        }
    }
    let cmp = if q.ascending { ">" } else { "<" };
    let dir = if q.ascending { "ASC" } else { "DESC" };
    let order = match q.index {
        Index::Primary => {
            if let Some(cursor) = &q.cursor {
                let parts = decode_cursor(cursor, 1)?;
                sql.push_str(&format!(" AND sk {cmp} ?"));
                args.push(parts[0].clone().into());
            }
            format!(" ORDER BY sk {dir}")
        }
        Index::Gsi1 | Index::Gsi2 => {
            if let Some(cursor) = &q.cursor {
                let parts = decode_cursor(cursor, 3)?;
                sql.push_str(&format!(" AND ({sk_col}, pk, sk) {cmp} (?, ?, ?)"));
                for part in parts {
                    args.push(part.into());
                }
            }
            format!(" ORDER BY {sk_col} {dir}, pk {dir}, sk {dir}")
        }
    };
    sql.push_str(&order);
    // Fetch one extra row to know whether another page exists.
    let limit = q.limit.unwrap_or(usize::MAX).max(1);
    if limit != usize::MAX {
        sql.push_str(&format!(" LIMIT {}", limit.saturating_add(1)));
    }
    fetch_page(conn, &sql, args, limit, |last| {
        match (q.index, &last.gsi1, &last.gsi2) {
            (Index::Primary, _, _) => encode_cursor(&[&last.sk]),
            (Index::Gsi1, Some(k), _) | (Index::Gsi2, _, Some(k)) => {
                encode_cursor(&[&k.sk, &last.pk, &last.sk])
            }
            _ => encode_cursor(&["", &last.pk, &last.sk]),
        }
    })
}

/// Runs a statement that selects up to `limit + 1` items: the first `limit` are the page, and
/// the cursor (`cursor_of` the last) says whether another follows.
fn fetch_page(
    conn: &Connection,
    sql: &str,
    args: Vec<rusqlite::types::Value>,
    limit: usize,
    cursor_of: impl Fn(&Item) -> String,
) -> Result<Page, StoreError> {
    let mut stmt = conn.prepare_cached(sql).map_err(unavailable)?;
    let mut items: Vec<Item> = stmt
        .query_map(rusqlite::params_from_iter(args), row_to_item)
        .map_err(unavailable)?
        .collect::<Result<_, _>>()
        .map_err(unavailable)?;
    let cursor = if items.len() > limit {
        items.truncate(limit);
        items.last().map(cursor_of)
    } else {
        None
    };
    Ok(Page { items, cursor })
}

#[async_trait]
impl ItemStore for EmbeddedStore {
    async fn get(&self, pk: &str, sk: &str, _consistent: bool) -> Result<Option<Item>, StoreError> {
        let (pk, sk, now) = (pk.to_owned(), sk.to_owned(), self.clock.unix());
        self.db
            .read(move |conn| {
                conn.prepare_cached(&format!(
                        "SELECT {COLUMNS} FROM items WHERE pk = ?1 AND sk = ?2 AND (expires_at IS NULL OR expires_at > ?3)"
                    ))
                    .map_err(unavailable)?
                    .query_row(params![pk, sk, now],
                    row_to_item,
                )
                .optional()
                .map_err(unavailable)
            })
            .await
            .map_err(StoreError::Unavailable)?
    }

    async fn get_many(
        &self,
        keys: Vec<(String, String)>,
        _consistent: bool,
    ) -> Result<Vec<Option<Item>>, StoreError> {
        let now = self.clock.unix();
        self.db
            .read(move |conn| {
                // One read transaction for every key: one snapshot, and one take of the WAL
                // read lock and check of the page cache instead of one per key (a page of 100
                // domains cost 100 of each, and a write between two emptied the cache again).
                let tx = conn.transaction().map_err(unavailable)?;
                let found = {
                    let mut statement = tx
                        .prepare_cached(&format!(
                            "SELECT {COLUMNS} FROM items WHERE pk = ?1 AND sk = ?2 AND (expires_at IS NULL OR expires_at > ?3)"
                        ))
                        .map_err(unavailable)?;
                    keys.iter()
                        .map(|(pk, sk)| {
                            statement
                                .query_row(params![pk, sk, now], row_to_item)
                                .optional()
                                .map_err(unavailable)
                        })
                        .collect::<Result<Vec<_>, _>>()?
                };
                tx.commit().map_err(unavailable)?;
                Ok(found)
            })
            .await
            .map_err(StoreError::Unavailable)?
    }

    async fn put(&self, item: Item, condition: Condition) -> Result<(), StoreError> {
        let now = self.clock.unix();
        self.db
            .with(move |conn| {
                let tx = conn
                    .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
                    .map_err(unavailable)?;
                let op = WriteOp::Put { item, condition };
                if !apply(&tx, &op, now)? {
                    return Err(StoreError::ConditionFailed);
                }
                tx.commit().map_err(unavailable)
            })
            .await
            .map_err(StoreError::Unavailable)?
    }

    async fn delete(&self, pk: &str, sk: &str, condition: Condition) -> Result<bool, StoreError> {
        let (pk, sk, now) = (pk.to_owned(), sk.to_owned(), self.clock.unix());
        self.db
            .with(move |conn| {
                let tx = conn
                    .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
                    .map_err(unavailable)?;
                let existed = live_version(&tx, &pk, &sk, now)?.is_some();
                let op = WriteOp::Delete { pk, sk, condition };
                if !apply(&tx, &op, now)? {
                    return Err(StoreError::ConditionFailed);
                }
                tx.commit().map_err(unavailable)?;
                Ok(existed)
            })
            .await
            .map_err(StoreError::Unavailable)?
    }

    async fn query(&self, query: Query) -> Result<Page, StoreError> {
        let now = self.clock.unix();
        self.db
            .read(move |conn| run_query(conn, &query, now))
            .await
            .map_err(StoreError::Unavailable)?
    }

    async fn scan(&self, cursor: Option<String>, limit: usize) -> Result<Page, StoreError> {
        let now = self.clock.unix();
        let after = match cursor {
            Some(c) => Some(decode_cursor(&c, 2)?),
            None => None,
        };
        let limit = limit.clamp(1, 10_000);
        self.db
            .read(move |conn| {
                let mut sql = format!(
                    "SELECT {COLUMNS} FROM items WHERE (expires_at IS NULL OR expires_at > ?)"
                );
                let mut args: Vec<rusqlite::types::Value> = vec![now.into()];
                if let Some(parts) = after {
                    sql.push_str(" AND (pk, sk) > (?, ?)");
                    args.extend(parts.into_iter().map(Into::into));
                }
                sql.push_str(&format!(" ORDER BY pk, sk LIMIT {}", limit + 1));
                fetch_page(conn, &sql, args, limit, |last| {
                    encode_cursor(&[&last.pk, &last.sk])
                })
            })
            .await
            .map_err(StoreError::Unavailable)?
    }

    async fn transact(&self, ops: Vec<WriteOp>) -> Result<(), StoreError> {
        if ops.is_empty() {
            return Ok(());
        }
        if ops.len() > MAX_TRANSACTION_OPS {
            return Err(StoreError::Invalid(format!(
                "a transaction holds at most {MAX_TRANSACTION_OPS} operations"
            )));
        }
        let mut seen = HashSet::new();
        for op in &ops {
            if !seen.insert(op.key()) {
                return Err(StoreError::Invalid(
                    "two operations in one transaction touch the same item".into(),
                ));
            }
        }
        let now = self.clock.unix();
        self.db
            .with(move |conn| {
                let tx = conn
                    .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
                    .map_err(unavailable)?;
                for (index, op) in ops.iter().enumerate() {
                    if !apply(&tx, op, now)? {
                        // Dropping `tx` rolls back every earlier op.
                        return Err(StoreError::TransactionCanceled {
                            failed: Some(index),
                        });
                    }
                }
                tx.commit().map_err(unavailable)
            })
            .await
            .map_err(StoreError::Unavailable)?
    }

    async fn put_all(&self, items: Vec<Item>) -> Result<(), StoreError> {
        // Unconditional puts: one transaction, every one applied.
        let ops = items
            .into_iter()
            .map(|item| WriteOp::Put {
                item,
                condition: Condition::None,
            })
            .collect();
        self.write_each(ops).await.map(|_| ())
    }

    async fn write_each(&self, ops: Vec<WriteOp>) -> Result<Vec<bool>, StoreError> {
        if ops.is_empty() {
            return Ok(Vec::new());
        }
        let mut seen = HashSet::new();
        if ops.iter().any(|op| !seen.insert(op.key())) {
            return Err(StoreError::Invalid(
                "two operations on one item in write_each".into(),
            ));
        }
        let now = self.clock.unix();
        self.db
            .with(move |conn| {
                let tx = conn
                    .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
                    .map_err(unavailable)?;
                let applied = ops
                    .iter()
                    .map(|op| apply(&tx, op, now))
                    .collect::<Result<Vec<_>, _>>()?;
                tx.commit().map_err(unavailable)?;
                Ok(applied)
            })
            .await
            .map_err(StoreError::Unavailable)?
    }

    async fn increment(
        &self,
        pk: &str,
        sk: &str,
        by: i64,
        expires_at: Option<i64>,
    ) -> Result<i64, StoreError> {
        let (pk, sk, now) = (pk.to_owned(), sk.to_owned(), self.clock.unix());
        self.db
            .with(move |conn| {
                let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate).map_err(unavailable)?;
                let current: Option<i64> = tx
                    .prepare_cached("SELECT COALESCE(counter, 0) FROM items WHERE pk = ?1 AND sk = ?2 AND (expires_at IS NULL OR expires_at > ?3)")
                    .map_err(unavailable)?
                    .query_row(params![pk, sk, now],
                        |row| row.get(0),
                    )
                    .optional()
                    .map_err(unavailable)?;
                let value = match current {
                    Some(n) => {
                        let value = n.saturating_add(by);
                        tx.prepare_cached("UPDATE items SET counter = ?3 WHERE pk = ?1 AND sk = ?2")
                    .map_err(unavailable)?
                    .execute(params![pk, sk, value],
                        )
                        .map_err(unavailable)?;
                        value
                    }
                    None => {
                        let mut item = Item::new(pk, sk, Vec::new());
                        item.counter = Some(by);
                        item.expires_at = expires_at;
                        write_item(&tx, &item)?;
                        by
                    }
                };
                tx.commit().map_err(unavailable)?;
                Ok(value)
            })
            .await
            .map_err(StoreError::Unavailable)?
    }
}
