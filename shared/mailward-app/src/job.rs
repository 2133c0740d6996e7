//! What a background job is: a payload type that knows its name on the queue and which queue it
//! goes to ([`crate::jobs`] has every one). [`enqueue`] sends one; the workers' registry, one
//! line per job type, runs them.
//!
//! Every job is idempotent: at-least-once delivery may run it twice.

use crate::state::AppState;
use mailward_domain::queue::{QueueError, QueueName, send_job};
use serde::Serialize;
use serde::de::DeserializeOwned;

/// A kind of background job; the implementing type is its payload. What running it does is the
/// workers' (`mailward_workers::jobs::Work`): an operation can send a job without linking it.
pub trait Job: Serialize + DeserializeOwned + Send + Sync + 'static {
    /// The job's name in the queue envelope (stable: messages in flight carry it).
    const NAME: &'static str;
    /// The queue it is sent to.
    const QUEUE: QueueName = QueueName::Jobs;
}

/// Why a job could not be sent.
#[derive(Debug, thiserror::Error)]
pub enum EnqueueError {
    /// The payload did not serialize (a bug).
    #[error("job payload: {0}")]
    Payload(#[from] serde_json::Error),
    /// The queue refused it.
    #[error(transparent)]
    Queue(#[from] QueueError),
}

impl From<EnqueueError> for crate::error::ServiceError {
    fn from(error: EnqueueError) -> Self {
        match error {
            EnqueueError::Payload(e) => e.into(),
            EnqueueError::Queue(e) => e.into(),
        }
    }
}

/// Sends `job` to its queue, to run no sooner than `delay_secs` from now.
pub async fn enqueue<J: Job>(
    state: &AppState,
    job: &J,
    delay_secs: u64,
) -> Result<(), EnqueueError> {
    let data = serde_json::to_value(job)?;
    send_job(
        state.queue.as_ref(),
        J::QUEUE,
        J::NAME,
        data,
        state.clock.unix(),
        delay_secs,
    )
    .await?;
    Ok(())
}
