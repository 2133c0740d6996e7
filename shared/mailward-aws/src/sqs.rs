//! [`Queue`] over Amazon SQS.
//!
//! Visibility timeouts, delays and dead-lettering are SQS's own: each queue carries a
//! `RedrivePolicy` naming its dead-letter queue, so after `maxReceiveCount` receives without a
//! delete SQS moves the message there. The adapter only maps names to URLs and SDK types to the
//! port's.

use async_trait::async_trait;
use aws_sdk_sqs::error::{DisplayErrorContext, ProvideErrorMetadata as _};
use aws_sdk_sqs::types::{MessageSystemAttributeName, QueueAttributeName};
use mailward_domain::queue::{
    MAX_NATIVE_DELAY_SECS, Queue, QueueDepth, QueueError, QueueName, Received,
};

/// SQS caps a receive batch at 10 messages.
const MAX_BATCH: usize = 10;
/// SQS caps the visibility timeout at 12 hours.
const MAX_VISIBILITY_SECS: u64 = 43_200;
/// Long polling for one second: a short poll (0) samples only some SQS servers and may come back
/// empty while messages are waiting; a long poll asks all of them.
const WAIT_TIME_SECS: i32 = 1;
/// Dead-letter queues keep messages for the SQS maximum (14 days): SQS keeps a message's original
/// enqueue time when it moves it, so a shorter retention could drop it on arrival.
const DLQ_RETENTION_SECS: &str = "1209600";

/// The URLs of Mailward's queues and their dead-letter queues, from configuration (or from
/// [`create_queues`] in tests).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueueUrls {
    /// [`QueueName::Jobs`].
    pub jobs: String,
    /// Dead-letter queue of `jobs`.
    pub jobs_dlq: String,
    /// [`QueueName::Deliveries`].
    pub deliveries: String,
    /// Dead-letter queue of `deliveries`.
    pub deliveries_dlq: String,
}

impl QueueUrls {
    fn live(&self, queue: QueueName) -> &str {
        match queue {
            QueueName::Jobs => &self.jobs,
            QueueName::Deliveries => &self.deliveries,
        }
    }

    fn dead(&self, queue: QueueName) -> &str {
        match queue {
            QueueName::Jobs => &self.jobs_dlq,
            QueueName::Deliveries => &self.deliveries_dlq,
        }
    }
}

/// The queue port on SQS, used by the Lambda functions (producers) and by tests.
#[derive(Debug, Clone)]
pub struct SqsQueue {
    client: aws_sdk_sqs::Client,
    urls: QueueUrls,
    max_delay_secs: u64,
}

impl SqsQueue {
    /// A queue adapter over existing queues whose redrive policies already point at their
    /// dead-letter queues.
    pub fn new(client: aws_sdk_sqs::Client, urls: QueueUrls) -> Self {
        Self {
            client,
            urls,
            max_delay_secs: MAX_NATIVE_DELAY_SECS,
        }
    }

    /// Holds messages back for at most `secs` of SQS's (real) time, whatever delay was asked:
    /// jobs carry their own `not_before`, checked against the clock port, and are sent again
    /// until due, so a shorter hop only wakes a consumer more often. Tests on a moved clock use
    /// one second, so moving the clock past a delay releases the message within a second.
    pub fn with_max_delay(mut self, secs: u64) -> Self {
        self.max_delay_secs = secs.min(MAX_NATIVE_DELAY_SECS);
        self
    }

    async fn receive_from(
        &self,
        url: &str,
        max: usize,
        visibility_secs: u64,
    ) -> Result<Vec<Received>, QueueError> {
        let max = i32::try_from(max.clamp(1, MAX_BATCH)).unwrap_or(1);
        let visibility = i32::try_from(visibility_secs.min(MAX_VISIBILITY_SECS)).unwrap_or(0);
        let out = self
            .client
            .receive_message()
            .queue_url(url)
            .max_number_of_messages(max)
            .visibility_timeout(visibility)
            .wait_time_seconds(WAIT_TIME_SECS)
            .message_system_attribute_names(MessageSystemAttributeName::ApproximateReceiveCount)
            .send()
            .await
            .map_err(|e| unavailable("ReceiveMessage", &e))?;
        out.messages()
            .iter()
            .map(|m| {
                let (Some(id), Some(receipt)) = (m.message_id(), m.receipt_handle()) else {
                    return Err(QueueError::Unavailable(
                        "SQS returned a message without id or receipt handle".into(),
                    ));
                };
                let receive_count = m
                    .attributes()
                    .and_then(|a| a.get(&MessageSystemAttributeName::ApproximateReceiveCount))
                    .and_then(|c| c.parse().ok())
                    .unwrap_or(1);
                Ok(Received {
                    id: id.to_owned(),
                    receipt: receipt.to_owned(),
                    body: m.body().unwrap_or_default().to_owned(),
                    receive_count,
                })
            })
            .collect()
    }
}

fn unavailable<E: std::error::Error + 'static>(op: &str, err: &E) -> QueueError {
    QueueError::Unavailable(format!("SQS {op}: {}", DisplayErrorContext(err)))
}

#[async_trait]
impl Queue for SqsQueue {
    async fn send(
        &self,
        queue: QueueName,
        body: String,
        delay_secs: u64,
    ) -> Result<(), QueueError> {
        if delay_secs > MAX_NATIVE_DELAY_SECS {
            return Err(QueueError::Invalid(format!(
                "delay of {delay_secs} s exceeds SQS's {MAX_NATIVE_DELAY_SECS} s"
            )));
        }
        let delay = i32::try_from(delay_secs.min(self.max_delay_secs)).unwrap_or(0);
        self.client
            .send_message()
            .queue_url(self.urls.live(queue))
            .message_body(body)
            .delay_seconds(delay)
            .send()
            .await
            .map_err(|e| {
                let refused = e.as_service_error().is_some_and(|s| {
                    s.is_invalid_message_contents()
                        || s.code()
                            .is_some_and(|c| c.contains("InvalidParameterValue"))
                });
                if refused {
                    QueueError::Invalid(format!(
                        "SQS refused the message: {}",
                        DisplayErrorContext(&e)
                    ))
                } else {
                    unavailable("SendMessage", &e)
                }
            })?;
        Ok(())
    }

    async fn receive(
        &self,
        queue: QueueName,
        max: usize,
        visibility_secs: u64,
    ) -> Result<Vec<Received>, QueueError> {
        self.receive_from(self.urls.live(queue), max, visibility_secs)
            .await
    }

    async fn ack(&self, queue: QueueName, receipt: &str) -> Result<(), QueueError> {
        self.client
            .delete_message()
            .queue_url(self.urls.live(queue))
            .receipt_handle(receipt)
            .send()
            .await
            .map_err(|e| unavailable("DeleteMessage", &e))?;
        Ok(())
    }

    async fn receive_dead_letters(
        &self,
        queue: QueueName,
        max: usize,
        visibility_secs: u64,
    ) -> Result<Vec<Received>, QueueError> {
        self.receive_from(self.urls.dead(queue), max, visibility_secs)
            .await
    }

    async fn depth(&self, queue: QueueName) -> Result<QueueDepth, QueueError> {
        use aws_sdk_sqs::types::QueueAttributeName as A;
        let main = self
            .attributes(
                self.urls.live(queue),
                &[
                    A::ApproximateNumberOfMessages,
                    A::ApproximateNumberOfMessagesNotVisible,
                    A::ApproximateNumberOfMessagesDelayed,
                ],
            )
            .await?;
        let dead = self
            .attributes(
                self.urls.dead(queue),
                &[
                    A::ApproximateNumberOfMessages,
                    A::ApproximateNumberOfMessagesNotVisible,
                ],
            )
            .await?;
        Ok(QueueDepth {
            ready: main[0],
            waiting: main[1] + main[2],
            dead: dead[0] + dead[1],
        })
    }
}

impl SqsQueue {
    /// The numeric attributes `names` of the queue at `url`, in order (0 when absent).
    async fn attributes(
        &self,
        url: &str,
        names: &[aws_sdk_sqs::types::QueueAttributeName],
    ) -> Result<Vec<u64>, QueueError> {
        let out = self
            .client
            .get_queue_attributes()
            .queue_url(url)
            .set_attribute_names(Some(names.to_vec()))
            .send()
            .await
            .map_err(|e| {
                QueueError::Unavailable(aws_sdk_sqs::error::DisplayErrorContext(e).to_string())
            })?;
        let attributes = out.attributes();
        Ok(names
            .iter()
            .map(|name| {
                attributes
                    .and_then(|a| a.get(name))
                    .and_then(|v| v.parse().ok())
                    .unwrap_or(0)
            })
            .collect())
    }
}

/// Creates `<prefix>-jobs` and `<prefix>-deliveries` with their `-dlq` dead-letter queues, a
/// message moving to the DLQ after `max_receives` receives without a delete. For tests against
/// moto and local bootstrapping; deployed queues come from the template.
pub async fn create_queues(
    client: &aws_sdk_sqs::Client,
    prefix: &str,
    max_receives: u32,
) -> anyhow::Result<QueueUrls> {
    let (jobs, jobs_dlq) = create_pair(client, prefix, QueueName::Jobs, max_receives).await?;
    let (deliveries, deliveries_dlq) =
        create_pair(client, prefix, QueueName::Deliveries, max_receives).await?;
    Ok(QueueUrls {
        jobs,
        jobs_dlq,
        deliveries,
        deliveries_dlq,
    })
}

async fn create_pair(
    client: &aws_sdk_sqs::Client,
    prefix: &str,
    queue: QueueName,
    max_receives: u32,
) -> anyhow::Result<(String, String)> {
    let name = format!("{prefix}-{}", queue.as_str());
    let dlq_url = client
        .create_queue()
        .queue_name(format!("{name}-dlq"))
        .attributes(
            QueueAttributeName::MessageRetentionPeriod,
            DLQ_RETENTION_SECS,
        )
        .send()
        .await
        .map_err(|e| anyhow::anyhow!("creating {name}-dlq: {}", DisplayErrorContext(&e)))?
        .queue_url
        .ok_or_else(|| anyhow::anyhow!("CreateQueue for {name}-dlq returned no URL"))?;
    let dlq_arn = client
        .get_queue_attributes()
        .queue_url(&dlq_url)
        .attribute_names(QueueAttributeName::QueueArn)
        .send()
        .await
        .map_err(|e| anyhow::anyhow!("reading {name}-dlq's ARN: {}", DisplayErrorContext(&e)))?
        .attributes
        .and_then(|mut a| a.remove(&QueueAttributeName::QueueArn))
        .ok_or_else(|| anyhow::anyhow!("{name}-dlq has no QueueArn attribute"))?;
    let redrive = serde_json::json!({
        "deadLetterTargetArn": dlq_arn,
        "maxReceiveCount": max_receives.max(1).to_string(),
    });
    let url = client
        .create_queue()
        .queue_name(&name)
        .attributes(QueueAttributeName::RedrivePolicy, redrive.to_string())
        .send()
        .await
        .map_err(|e| anyhow::anyhow!("creating {name}: {}", DisplayErrorContext(&e)))?
        .queue_url
        .ok_or_else(|| anyhow::anyhow!("CreateQueue for {name} returned no URL"))?;
    Ok((url, dlq_url))
}
