//! Embedded adapters: what the local stack (and most tests) run on instead of AWS.
//!
//! - [`EmbeddedStore`]: the item store in one SQLite file (WAL), or in memory for tests.
//! - [`EmbeddedQueue`]: a durable queue table in the same file, so no message is lost across a
//!   restart of the local stack.
//! - [`FileMailer`]: writes each outbound email as an `.eml` file in the data directory's outbox.
//! - [`MemoryRateCounter`]: rate-limit windows counted in memory (one process, no store write).
//!
//! Nothing here is a mock: each adapter persists and honours the same contract as its AWS
//! counterpart (both pass the conformance suites in `mailward-testkit`). Only this crate imports
//! the embedded database crate.

mod archive_write;
mod database;
mod mailer;
pub mod objects;
mod queue;
mod rate_counter;
mod store;

pub use database::Database;
pub use mailer::{FileMailer, render_eml};
pub use objects::DirObjectStore;
pub use queue::EmbeddedQueue;
pub use rate_counter::MemoryRateCounter;
pub use store::EmbeddedStore;

#[cfg(test)]
mod conformance {
    use super::*;
    use async_trait::async_trait;
    use mailward_domain::ManualClock;
    use std::sync::Arc;

    struct Advance(Arc<ManualClock>);

    #[async_trait]
    impl mailward_testkit::TimeTravel for Advance {
        async fn pass(&self, secs: u64) {
            self.0.advance(time::Duration::seconds(
                i64::try_from(secs).unwrap_or(i64::MAX),
            ));
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn embedded_store_passes_the_store_conformance_suite() {
        let clock = Arc::new(ManualClock::starting_now());
        let store = EmbeddedStore::new(Database::in_memory().unwrap(), clock.clone());
        mailward_testkit::store_conformance(Arc::new(store), clock).await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn embedded_store_on_a_wal_file_passes_the_store_conformance_suite() {
        let dir = tempfile::tempdir().unwrap();
        let clock = Arc::new(ManualClock::starting_now());
        let db = Database::open(&dir.path().join("mailward.db")).unwrap();
        mailward_testkit::store_conformance(Arc::new(EmbeddedStore::new(db, clock.clone())), clock)
            .await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn embedded_queue_passes_the_queue_conformance_suite() {
        let clock = Arc::new(ManualClock::starting_now());
        let queue = EmbeddedQueue::new(Database::in_memory().unwrap(), clock.clone(), 3);
        mailward_testkit::queue_conformance(Arc::new(queue), &Advance(clock)).await;
    }

    /// Two processes on one data directory (`mailward sweep` beside a running server): their
    /// transactions wait for each other instead of failing with "database is locked". A
    /// transaction that began as a reader and wrote after the other process committed used to
    /// fail at once (SQLite cannot upgrade a stale read snapshot in WAL mode, whatever the busy
    /// timeout); write transactions now take the write lock when they begin.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn two_processes_writing_one_file_wait_for_each_other() {
        use mailward_domain::store::{Condition, Item, ItemStore, WriteOp};
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("mailward.db");
        let clock = Arc::new(ManualClock::starting_now());
        let a = Arc::new(EmbeddedStore::new(
            Database::open(&path).unwrap(),
            clock.clone(),
        ));
        let b = Arc::new(EmbeddedStore::new(
            Database::open(&path).unwrap(),
            clock.clone(),
        ));
        let mut writers = Vec::new();
        for (n, store) in [a, b].into_iter().enumerate() {
            writers.push(tokio::spawn(async move {
                for i in 0..200 {
                    let ops = (0..3)
                        .map(|k| WriteOp::Put {
                            item: Item::new(format!("P#{n}"), format!("S#{i}#{k}"), vec![1; 512]),
                            condition: Condition::NotExists,
                        })
                        .collect();
                    store.transact(ops).await.unwrap();
                }
            }));
        }
        for writer in writers {
            writer.await.unwrap();
        }
    }

    #[tokio::test]
    async fn queued_messages_survive_reopening_the_file() {
        use mailward_domain::queue::{Queue, QueueName};
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("mailward.db");
        let clock = Arc::new(ManualClock::starting_now());
        {
            let queue = EmbeddedQueue::new(Database::open(&path).unwrap(), clock.clone(), 3);
            queue
                .send(QueueName::Jobs, "persist".into(), 0)
                .await
                .unwrap();
            // Received but not acked when the process "dies".
            assert_eq!(
                queue.receive(QueueName::Jobs, 1, 30).await.unwrap().len(),
                1
            );
        }
        clock.advance(time::Duration::seconds(31));
        let queue = EmbeddedQueue::new(Database::open(&path).unwrap(), clock, 3);
        let got = queue.receive(QueueName::Jobs, 1, 30).await.unwrap();
        assert_eq!(got.len(), 1);
        assert_eq!(got[0].body, "persist");
    }
}
