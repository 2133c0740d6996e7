//! [`Queue`] on a table of the SQLite file: durable, so no message is lost across a restart.

use crate::database::Database;
use async_trait::async_trait;
use mailward_domain::Clock;
use mailward_domain::queue::{
    MAX_NATIVE_DELAY_SECS, Queue, QueueDepth, QueueError, QueueName, Received,
};
use rusqlite::params;
use std::sync::Arc;

/// The embedded queue. Cheap to clone.
#[derive(Clone, Debug)]
pub struct EmbeddedQueue {
    db: Database,
    clock: Arc<dyn Clock>,
    max_receives: u32,
}

impl EmbeddedQueue {
    /// A queue over `db`; a message received `max_receives` times without an ack goes to the
    /// dead-letter queue on its next receive (SQS's `maxReceiveCount` rule).
    pub fn new(db: Database, clock: Arc<dyn Clock>, max_receives: u32) -> Self {
        Self {
            db,
            clock,
            max_receives: max_receives.max(1),
        }
    }

    fn now_ms(&self) -> i64 {
        i64::try_from(self.clock.now().unix_timestamp_nanos() / 1_000_000).unwrap_or(i64::MAX)
    }

    async fn receive_from(
        &self,
        queue: QueueName,
        dead: bool,
        max: usize,
        visibility_secs: u64,
    ) -> Result<Vec<Received>, QueueError> {
        let now = self.now_ms();
        let visible_at = now.saturating_add(secs_to_ms(visibility_secs));
        let max_receives = i64::from(self.max_receives);
        let name = queue.as_str();
        let max = i64::try_from(max.clamp(1, 10)).unwrap_or(10);
        self.db
            .with(move |conn| -> Result<Vec<Received>, rusqlite::Error> {
                let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
                let mut out = Vec::new();
                {
                    let mut select = tx.prepare_cached(
                        "SELECT id, body, receive_count FROM queue_messages
                         WHERE queue = ?1 AND dead = ?2 AND visible_at_ms <= ?3
                         ORDER BY visible_at_ms, created_at_ms LIMIT ?4",
                    )?;
                    let rows: Vec<(String, String, i64)> = select
                        .query_map(params![name, dead, now, max * 2], |r| {
                            Ok((r.get(0)?, r.get(1)?, r.get(2)?))
                        })?
                        .collect::<Result<_, _>>()?;
                    for (id, body, count) in rows {
                        if !dead && count >= max_receives {
                            tx.execute(
                                "UPDATE queue_messages SET dead = 1, receive_count = 0, visible_at_ms = ?2 WHERE id = ?1",
                                params![id, now],
                            )?;
                            continue;
                        }
                        if i64::try_from(out.len()).unwrap_or(i64::MAX) >= max {
                            break;
                        }
                        let receipt = uuid::Uuid::new_v4().to_string();
                        tx.execute(
                            "UPDATE queue_messages SET receive_count = receive_count + 1, receipt = ?2, visible_at_ms = ?3 WHERE id = ?1",
                            params![id, receipt, visible_at],
                        )?;
                        out.push(Received {
                            id,
                            receipt,
                            body,
                            receive_count: u32::try_from(count + 1).unwrap_or(u32::MAX),
                        });
                    }
                }
                tx.commit()?;
                Ok(out)
            })
            .await
            .map_err(QueueError::Unavailable)?
            .map_err(|e| QueueError::Unavailable(e.to_string()))
    }
}

fn secs_to_ms(secs: u64) -> i64 {
    i64::try_from(secs.saturating_mul(1000)).unwrap_or(i64::MAX)
}

#[async_trait]
impl Queue for EmbeddedQueue {
    async fn send(
        &self,
        queue: QueueName,
        body: String,
        delay_secs: u64,
    ) -> Result<(), QueueError> {
        if delay_secs > MAX_NATIVE_DELAY_SECS {
            return Err(QueueError::Invalid(format!(
                "delay {delay_secs}s exceeds {MAX_NATIVE_DELAY_SECS}s"
            )));
        }
        if body.len() > 256 * 1024 {
            return Err(QueueError::Invalid("message body over 256 KiB".into()));
        }
        let now = self.now_ms();
        let visible_at = now.saturating_add(secs_to_ms(delay_secs));
        let id = uuid::Uuid::new_v4().to_string();
        let name = queue.as_str();
        self.db
            .with(move |conn| {
                conn.execute(
                    "INSERT INTO queue_messages (id, queue, body, visible_at_ms, created_at_ms) VALUES (?1, ?2, ?3, ?4, ?5)",
                    params![id, name, body, visible_at, now],
                )
            })
            .await
            .map_err(QueueError::Unavailable)?
            .map_err(|e| QueueError::Unavailable(e.to_string()))?;
        Ok(())
    }

    async fn receive(
        &self,
        queue: QueueName,
        max: usize,
        visibility_secs: u64,
    ) -> Result<Vec<Received>, QueueError> {
        self.receive_from(queue, false, max, visibility_secs).await
    }

    async fn ack(&self, _queue: QueueName, receipt: &str) -> Result<(), QueueError> {
        let receipt = receipt.to_owned();
        self.db
            .with(move |conn| {
                conn.execute(
                    "DELETE FROM queue_messages WHERE receipt = ?1",
                    params![receipt],
                )
            })
            .await
            .map_err(QueueError::Unavailable)?
            .map_err(|e| QueueError::Unavailable(e.to_string()))?;
        Ok(())
    }

    async fn receive_dead_letters(
        &self,
        queue: QueueName,
        max: usize,
        visibility_secs: u64,
    ) -> Result<Vec<Received>, QueueError> {
        self.receive_from(queue, true, max, visibility_secs).await
    }

    async fn depth(&self, queue: QueueName) -> Result<QueueDepth, QueueError> {
        let (name, now) = (queue.as_str(), self.now_ms());
        self.db
            .read(move |conn| {
                conn.query_row(
                    "SELECT COALESCE(SUM(dead = 0 AND visible_at_ms <= ?2), 0), \
                     COALESCE(SUM(dead = 0 AND visible_at_ms > ?2), 0), \
                     COALESCE(SUM(dead = 1), 0) FROM queue_messages WHERE queue = ?1",
                    params![name, now],
                    |row| {
                        Ok(QueueDepth {
                            ready: row.get::<_, i64>(0)?.unsigned_abs(),
                            waiting: row.get::<_, i64>(1)?.unsigned_abs(),
                            dead: row.get::<_, i64>(2)?.unsigned_abs(),
                        })
                    },
                )
            })
            .await
            .map_err(QueueError::Unavailable)?
            .map_err(|e| QueueError::Unavailable(e.to_string()))
    }
}
