//! The SQLite file shared by the embedded store and queue.

use rusqlite::{Connection, OpenFlags};
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
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

/// Read-only connections kept beside the writer (file databases only).
const READERS: usize = 4;

/// The SQLite connections shared by the embedded adapters: one writer and, for a file database,
/// a few readers.
///
/// The single writer behind a mutex keeps writes serialised (SQLite allows one writer anyway)
/// and makes conditional writes trivially atomic. In WAL mode readers never block the writer or
/// each other, so reads (most API requests) run on their own connections instead of queueing
/// behind every write; a read that starts after a write committed sees it. Each call runs on the
/// blocking pool so a slow statement never stalls the async executor.
#[derive(Clone)]
pub struct Database {
    conn: Arc<Mutex<Connection>>,
    readers: Arc<Vec<Mutex<Connection>>>,
    next_reader: Arc<AtomicUsize>,
}

impl std::fmt::Debug for Database {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Database")
            .field("readers", &self.readers.len())
            .finish_non_exhaustive()
    }
}

impl Database {
    /// Opens (creating if needed) the database file at `path`, in WAL mode.
    pub fn open(path: &Path) -> Result<Self, rusqlite::Error> {
        let conn = Connection::open(path)?;
        conn.pragma_update(None, "journal_mode", "WAL")?;
        conn.pragma_update(None, "synchronous", "NORMAL")?;
        // 32 MiB of page cache for the one writer (the default is 2 MiB): a report's rows are
        // large items on overflow pages, and with the default every insert re-read the index
        // pages it walks from the file.
        conn.pragma_update(None, "cache_size", -32_768)?;
        conn.busy_timeout(std::time::Duration::from_secs(5))?;
        conn.execute_batch(SCHEMA)?;
        let mut readers = Vec::with_capacity(READERS);
        for _ in 0..READERS {
            let reader = Connection::open_with_flags(
                path,
                OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
            )?;
            reader.busy_timeout(std::time::Duration::from_secs(5))?;
            readers.push(Mutex::new(reader));
        }
        Ok(Self::assemble(conn, readers))
    }

    /// A private in-memory database, for tests (one connection: readers could not see it).
    pub fn in_memory() -> Result<Self, rusqlite::Error> {
        let conn = Connection::open_in_memory()?;
        conn.execute_batch(SCHEMA)?;
        Ok(Self::assemble(conn, Vec::new()))
    }

    fn assemble(conn: Connection, readers: Vec<Mutex<Connection>>) -> Self {
        Self {
            conn: Arc::new(Mutex::new(conn)),
            readers: Arc::new(readers),
            next_reader: Arc::new(AtomicUsize::new(0)),
        }
    }

    /// Runs `f` with exclusive use of the writer connection on the blocking thread pool.
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

    /// Runs a read-only `f` on a reader connection (a free one if any, else the next in turn),
    /// or on the writer when there are no readers (in-memory databases).
    pub(crate) async fn read<T, F>(&self, f: F) -> Result<T, String>
    where
        T: Send + 'static,
        F: FnOnce(&mut Connection) -> T + Send + 'static,
    {
        if self.readers.is_empty() {
            return self.with(f).await;
        }
        let readers = Arc::clone(&self.readers);
        let start = self.next_reader.fetch_add(1, Ordering::Relaxed);
        tokio::task::spawn_blocking(move || {
            let count = readers.len();
            let free = (0..count).find_map(|i| readers[(start + i) % count].try_lock().ok());
            let mut guard = match free {
                Some(guard) => guard,
                None => readers[start % count]
                    .lock()
                    .unwrap_or_else(|poisoned| poisoned.into_inner()),
            };
            f(&mut guard)
        })
        .await
        .map_err(|e| format!("database task failed: {e}"))
    }

    /// Caps the database file at its current size plus `extra_pages` pages (`None` lifts the
    /// cap): writes that need more fail as on a full disk (SQLite's `SQLITE_FULL`). For fault
    /// tests on machines where a small file system cannot be mounted.
    pub async fn limit_growth(&self, extra_pages: Option<u64>) -> Result<(), String> {
        self.with(move |conn| {
            let pages: i64 = conn
                .query_row("PRAGMA page_count", [], |r| r.get(0))
                .map_err(|e| e.to_string())?;
            let cap = extra_pages.map_or(i64::from(u32::MAX - 1), |extra| {
                pages.saturating_add(i64::try_from(extra).unwrap_or(i64::MAX))
            });
            conn.query_row(&format!("PRAGMA max_page_count = {cap}"), [], |_| Ok(()))
                .map_err(|e| e.to_string())
        })
        .await?
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
