//! The queue port: delayed, at-least-once work.
//!
//! Adapters: an embedded queue table in the local SQLite file, and SQS on AWS. The contract both
//! honour (checked by the conformance suite in `mailward-testkit`):
//! - `send` with a delay up to [`MAX_NATIVE_DELAY_SECS`]; longer delays are the job layer's
//!   business ([`Envelope::not_before`]: the consumer re-enqueues until due), because SQS caps a
//!   message delay at 900 seconds.
//! - `receive` hides each returned message for the visibility timeout; a message not acked in that
//!   time is delivered again with a higher `receive_count` (at least once, never lost).
//! - After `max_receives` receives without an ack a message moves to the queue's dead-letter queue
//!   instead of being delivered again.

use async_trait::async_trait;
use serde::{Deserialize, Serialize};

/// SQS's maximum per-message delay. Longer delays hop through several sends.
pub const MAX_NATIVE_DELAY_SECS: u64 = 900;

/// The queues Mailward uses. Each has a dead-letter queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum QueueName {
    /// Background jobs: organization deletion, delayed task events, queued verifies.
    Jobs,
    /// Webhook deliveries (one message per event and endpoint).
    Deliveries,
}

impl QueueName {
    /// Every queue, for workers that drain all of them.
    pub const ALL: [QueueName; 2] = [QueueName::Jobs, QueueName::Deliveries];

    /// Stable name used in storage and in configuration.
    pub fn as_str(self) -> &'static str {
        match self {
            QueueName::Jobs => "jobs",
            QueueName::Deliveries => "deliveries",
        }
    }
}

/// A received message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Received {
    /// Stable message id.
    pub id: String,
    /// Handle to ack this particular receipt.
    pub receipt: String,
    /// The body as sent.
    pub body: String,
    /// How many times this message has been received, this one included.
    pub receive_count: u32,
}

/// Queue failures.
#[derive(Debug, thiserror::Error)]
pub enum QueueError {
    /// The request was invalid (delay too long, body too large).
    #[error("invalid queue request: {0}")]
    Invalid(String),
    /// The backend failed.
    #[error("queue unavailable: {0}")]
    Unavailable(String),
}

/// The queue port.
#[async_trait]
pub trait Queue: Send + Sync {
    /// Enqueues `body`, invisible for `delay_secs` (at most [`MAX_NATIVE_DELAY_SECS`]).
    async fn send(&self, queue: QueueName, body: String, delay_secs: u64)
    -> Result<(), QueueError>;

    /// Receives up to `max` visible messages, hiding each for `visibility_secs`.
    async fn receive(
        &self,
        queue: QueueName,
        max: usize,
        visibility_secs: u64,
    ) -> Result<Vec<Received>, QueueError>;

    /// Acknowledges (deletes) a received message.
    async fn ack(&self, queue: QueueName, receipt: &str) -> Result<(), QueueError>;

    /// Receives up to `max` messages from the queue's dead-letter queue (for inspection and
    /// tests; the messages are hidden for `visibility_secs` like ordinary receives).
    async fn receive_dead_letters(
        &self,
        queue: QueueName,
        max: usize,
        visibility_secs: u64,
    ) -> Result<Vec<Received>, QueueError>;

    /// How many messages the queue holds (approximately, on SQS): what an operator watches.
    async fn depth(&self, queue: QueueName) -> Result<QueueDepth, QueueError>;
}

/// A queue's message counts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct QueueDepth {
    /// Ready to be received now.
    pub ready: u64,
    /// Delayed or received and not yet acknowledged.
    pub waiting: u64,
    /// In the dead-letter queue.
    pub dead: u64,
}

/// The body every Mailward message carries: a job name, its JSON payload and the earliest time
/// it may run. `not_before` is how delays longer than SQS's 900 seconds work: a consumer that
/// receives an envelope early sends it again with the remaining delay (capped at 900 s).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Envelope {
    /// Job name, e.g. `delete_organization`.
    pub job: String,
    /// Job payload.
    pub data: serde_json::Value,
    /// Unix seconds before which the job must not run.
    #[serde(default)]
    pub not_before: i64,
}

impl Envelope {
    /// Seconds still to wait at `now`, zero when due.
    pub fn remaining_delay(&self, now_unix: i64) -> u64 {
        u64::try_from(self.not_before.saturating_sub(now_unix)).unwrap_or(0)
    }
}

/// Sends a job that must not run before `now + delay_secs`, whatever the delay: the first hop is
/// capped at [`MAX_NATIVE_DELAY_SECS`] and consumers re-enqueue until due.
pub async fn send_job(
    queue: &dyn Queue,
    name: QueueName,
    job: &str,
    data: serde_json::Value,
    now_unix: i64,
    delay_secs: u64,
) -> Result<(), QueueError> {
    let envelope = Envelope {
        job: job.to_owned(),
        data,
        not_before: now_unix.saturating_add(i64::try_from(delay_secs).unwrap_or(i64::MAX)),
    };
    let body = serde_json::to_string(&envelope).map_err(|e| QueueError::Invalid(e.to_string()))?;
    queue
        .send(name, body, delay_secs.min(MAX_NATIVE_DELAY_SECS))
        .await
}

/// What a consumer should do with a received envelope at `now`.
#[derive(Debug, PartialEq)]
pub enum Due {
    /// Run it.
    Run(Envelope),
    /// Not yet due: send it again with this delay, then ack the received copy.
    Requeue(Envelope, u64),
}

/// Decides whether a received message is due, per the `not_before` rule.
pub fn check_due(body: &str, now_unix: i64) -> Result<Due, serde_json::Error> {
    let envelope: Envelope = serde_json::from_str(body)?;
    let remaining = envelope.remaining_delay(now_unix);
    if remaining == 0 {
        Ok(Due::Run(envelope))
    } else {
        Ok(Due::Requeue(envelope, remaining.min(MAX_NATIVE_DELAY_SECS)))
    }
}
