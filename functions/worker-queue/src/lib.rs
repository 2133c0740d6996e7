//! The `worker-queue` function: consumes the jobs and deliveries queues (SQS event source
//! mappings with partial-batch failures). The jobs themselves live in
//! `mailward_workers::jobs`, shared with the local stack's in-process workers; this crate maps
//! SQS batches onto them.

use aws_lambda_events::event::sqs::{BatchItemFailure, SqsBatchResponse, SqsEvent};
use mailward_domain::queue::QueueName;
use mailward_services::AppState;

/// The URLs of the two queues this worker consumes.
#[derive(Debug, Clone)]
pub struct ConsumedQueues {
    /// The jobs queue.
    pub jobs: String,
    /// The webhook deliveries queue.
    pub deliveries: String,
}

/// Which queue an SQS record came from, by the queue name at the end of its ARN.
pub fn queue_of(arn: &str, queues: &ConsumedQueues) -> Option<QueueName> {
    let name = arn.rsplit(':').next()?;
    let last = |url: &str| url.rsplit('/').next().map(str::to_owned);
    if last(&queues.jobs).as_deref() == Some(name) {
        Some(QueueName::Jobs)
    } else if last(&queues.deliveries).as_deref() == Some(name) {
        Some(QueueName::Deliveries)
    } else {
        None
    }
}

/// Records of one batch handled at once. A sweep batch spends most of its time waiting on DNS
/// (25 domains, 8 at a time), so the ten records of a full SQS batch run together: one
/// environment evaluates up to 80 domains at once, as the sweep benchmark's process does
/// (README, "The sweep at 100,000 domains"), instead of 8.
pub const RECORDS_AT_ONCE: usize = 10;

/// Handles one SQS batch, [`RECORDS_AT_ONCE`] records at a time: every record that fails is
/// reported back (in the batch's order) so only it is retried.
pub async fn handle_sqs_batch(
    state: &AppState,
    queues: &ConsumedQueues,
    event: SqsEvent,
) -> SqsBatchResponse {
    use futures::StreamExt as _;
    let outcomes: Vec<(String, anyhow::Result<()>)> = futures::stream::iter(event.records)
        .map(|record| async move {
            let id = record.message_id.clone().unwrap_or_default();
            let queue = record
                .event_source_arn
                .as_deref()
                .and_then(|arn| queue_of(arn, queues));
            let outcome = match (queue, record.body.as_deref()) {
                (Some(queue), Some(body)) => {
                    mailward_workers::jobs::handle_message(state, queue, body)
                        .await
                        .map(|_| ())
                }
                _ => Err(anyhow::anyhow!(
                    "record from an unknown queue or without a body"
                )),
            };
            (id, outcome)
        })
        .buffered(RECORDS_AT_ONCE)
        .collect()
        .await;
    let mut response = SqsBatchResponse::default();
    for (id, outcome) in outcomes {
        if let Err(e) = outcome {
            tracing::warn!(message.id = %id, error = %e, "job failed; SQS will retry it");
            let mut failure = BatchItemFailure::default();
            failure.item_identifier = id;
            response.batch_item_failures.push(failure);
        }
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_are_matched_to_their_queue_by_arn() {
        let queues = ConsumedQueues {
            jobs: "https://sqs.us-east-1.amazonaws.com/1/mailward-jobs".into(),
            deliveries: "https://sqs.us-east-1.amazonaws.com/1/mailward-deliveries".into(),
        };
        assert_eq!(
            queue_of("arn:aws:sqs:us-east-1:1:mailward-jobs", &queues),
            Some(QueueName::Jobs)
        );
        assert_eq!(
            queue_of("arn:aws:sqs:us-east-1:1:mailward-deliveries", &queues),
            Some(QueueName::Deliveries)
        );
        assert_eq!(queue_of("arn:aws:sqs:us-east-1:1:other", &queues), None);
    }
}
