//! [`FaultyQueue`]: any queue that fails every call while its switch is on (an SQS outage), so
//! tests can show that requests answer 503 and that no queued work is lost.

use async_trait::async_trait;
use mailward_domain::queue::{Queue, QueueError, QueueName, Received};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// Forwards to `inner` unless `down` is set.
pub struct FaultyQueue {
    inner: Arc<dyn Queue>,
    down: Arc<AtomicBool>,
}

impl FaultyQueue {
    /// Wraps `inner`; every call fails while `down` is set.
    pub fn new(inner: Arc<dyn Queue>, down: Arc<AtomicBool>) -> Self {
        Self { inner, down }
    }

    fn check(&self) -> Result<(), QueueError> {
        if self.down.load(Ordering::SeqCst) {
            Err(QueueError::Unavailable(
                "injected outage: the queue service does not answer".into(),
            ))
        } else {
            Ok(())
        }
    }
}

impl std::fmt::Debug for FaultyQueue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FaultyQueue").finish_non_exhaustive()
    }
}

#[async_trait]
impl Queue for FaultyQueue {
    async fn send(
        &self,
        queue: QueueName,
        body: String,
        delay_secs: u64,
    ) -> Result<(), QueueError> {
        self.check()?;
        self.inner.send(queue, body, delay_secs).await
    }

    async fn receive(
        &self,
        queue: QueueName,
        max: usize,
        visibility_secs: u64,
    ) -> Result<Vec<Received>, QueueError> {
        self.check()?;
        self.inner.receive(queue, max, visibility_secs).await
    }

    async fn depth(
        &self,
        queue: QueueName,
    ) -> Result<mailward_domain::queue::QueueDepth, QueueError> {
        self.inner.depth(queue).await
    }

    async fn ack(&self, queue: QueueName, receipt: &str) -> Result<(), QueueError> {
        self.check()?;
        self.inner.ack(queue, receipt).await
    }

    async fn receive_dead_letters(
        &self,
        queue: QueueName,
        max: usize,
        visibility_secs: u64,
    ) -> Result<Vec<Received>, QueueError> {
        self.check()?;
        self.inner
            .receive_dead_letters(queue, max, visibility_secs)
            .await
    }
}
