//! Lambda entry point of the `worker-queue` function.

use aws_lambda_events::event::sqs::SqsEvent;
use worker_queue::{ConsumedQueues, handle_sqs_batch};

#[tokio::main]
async fn main() -> Result<(), lambda_runtime::Error> {
    let urls = mailward_lambda::queue_urls_from_env()
        .map_err(|e| lambda_runtime::Error::from(format!("{e:#}")))?;
    let queues = ConsumedQueues {
        jobs: urls.jobs,
        deliveries: urls.deliveries,
    };
    mailward_lambda::run_events(move |state, event: SqsEvent| {
        let queues = queues.clone();
        async move { Ok(handle_sqs_batch(&state, &queues, event).await) }
    })
    .await
}
