//! The SQLite file shared by the embedded store and queue.

use rusqlite::Connection;
use std::path::Path;
use std::sync::{Arc, Mutex};

const SCHEMA: &str = r"
CREATE TABLE IF NOT EXISTS items (
    pk TEXT NOT NULL,
    sk TEXT NOT NULL,
    data BLOB NOT NULL,
    version INTEGER NOT NULL,
    expires_at INTEGER,
    gsi1pk TEXT, gsi1sk TEXT,
    gsi2pk TEXT, gsi2sk TEXT,
    counter INTEGER,
    PRIMARY KEY (pk, sk)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS items_gsi1 ON items (gsi1pk, gsi1sk, pk, sk) WHERE gsi1pk IS NOT NULL;
CREATE INDEX IF NOT EXISTS items_gsi2 ON items (gsi2pk, gsi2sk, pk, sk) WHERE gsi2pk IS NOT NULL;
CREATE INDEX IF NOT EXISTS items_expiry ON items (expires_at) WHERE expires_at IS NOT NULL;
CREATE TABLE IF NOT EXISTS queue_messages (
    id TEXT PRIMARY KEY,
    queue TEXT NOT NULL,
    body TEXT NOT NULL,
    visible_at_ms INTEGER NOT NULL,
    receive_count INTEGER NOT NULL DEFAULT 0,
    receipt TEXT,
    dead INTEGER NOT NULL DEFAULT 0,
    created_at_ms INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS queue_ready ON queue_messages (queue, dead, visible_at_ms);
";

/// One SQLite connection shared by the embedded adapters.
///
/// A single connection behind a mutex keeps writes serialised (SQLite allows one writer anyway)
/// and makes conditional writes trivially atomic; each call runs on the blocking pool so a slow
/// statement never stalls the async executor.
#[derive(Clone)]
pub struct Database {
    conn: Arc<Mutex<Connection>>,
}

impl std::fmt::Debug for Database {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Database").finish_non_exhaustive()
    }
}

impl Database {
    /// Opens (creating if needed) the database file at `path`, in WAL mode.
    pub fn open(path: &Path) -> Result<Self, rusqlite::Error> {
        let conn = Connection::open(path)?;
        conn.pragma_update(None, "journal_mode", "WAL")?;
        conn.pragma_update(None, "synchronous", "NORMAL")?;
        conn.busy_timeout(std::time::Duration::from_secs(5))?;
        Self::init(conn)
    }

    /// A private in-memory database, for tests.
    pub fn in_memory() -> Result<Self, rusqlite::Error> {
        Self::init(Connection::open_in_memory()?)
    }

    fn init(conn: Connection) -> Result<Self, rusqlite::Error> {
        conn.execute_batch(SCHEMA)?;
        Ok(Self {
            conn: Arc::new(Mutex::new(conn)),
        })
    }

    /// Runs `f` with exclusive use of the connection on the blocking thread pool.
    pub(crate) async fn with<T, F>(&self, f: F) -> Result<T, String>
    where
        T: Send + 'static,
        F: FnOnce(&mut Connection) -> T + Send + 'static,
    {
        let conn = Arc::clone(&self.conn);
        tokio::task::spawn_blocking(move || {
            let mut guard = conn.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
            f(&mut guard)
        })
        .await
        .map_err(|e| format!("database task failed: {e}"))
    }

    /// Deletes items whose TTL has passed (the local stand-in for DynamoDB's TTL reaper).
    pub async fn reap_expired(&self, now_unix: i64) -> Result<usize, String> {
        self.with(move |conn| {
            conn.execute(
                "DELETE FROM items WHERE expires_at IS NOT NULL AND expires_at <= ?1",
                [now_unix],
            )
            .map_err(|e| e.to_string())
        })
        .await?
    }
}
