//! One call that builds every AWS adapter from the environment, so Lambda wiring needs no SDK
//! imports of its own.

use crate::{DynamoStore, QueueUrls, SesMailer, SqsQueue, aws_config_from_env};
use mailward_domain::Clock;
use std::sync::Arc;

/// The AWS adapters of one deployment.
pub struct AwsPorts {
    /// DynamoDB item store.
    pub store: DynamoStore,
    /// SQS queues.
    pub queue: SqsQueue,
    /// SES mailer.
    pub mailer: SesMailer,
}

/// Builds the adapters for `table`, the queues in `urls` and the sender `mail_from`, with the
/// SDK configuration from the environment (see [`aws_config_from_env`]).
pub async fn ports_from_env(
    table: String,
    urls: QueueUrls,
    mail_from: String,
    clock: Arc<dyn Clock>,
) -> AwsPorts {
    let sdk = aws_config_from_env().await;
    AwsPorts {
        store: DynamoStore::new(aws_sdk_dynamodb::Client::new(&sdk), table, clock),
        queue: SqsQueue::new(aws_sdk_sqs::Client::new(&sdk), urls),
        mailer: SesMailer::new(aws_sdk_sesv2::Client::new(&sdk), mail_from),
    }
}
