//! Lambda wiring: what every function's ten-line `main` calls.
//!
//! [`state_from_env`] builds the application state on the AWS adapters (DynamoDB, SQS, SES) once
//! per cold start from the variables `template.yaml` sets; [`run_http`] serves a group's routes
//! through `lambda_http`; [`run_queue_worker`] consumes SQS batches with partial-batch failures.

use anyhow::Context as _;
use aws_lambda_events::event::sqs::{BatchItemFailure, SqsBatchResponse, SqsEvent};
use lambda_runtime::{LambdaEvent, service_fn};
use mailward_aws::QueueUrls;
use mailward_domain::queue::QueueName;
use mailward_domain::{Clock, SystemClock};
use mailward_http::{AppState, Config};
use std::sync::Arc;
use utoipa_axum::router::OpenApiRouter;

fn env(name: &str) -> anyhow::Result<String> {
    std::env::var(name).with_context(|| format!("environment variable {name} is not set"))
}

/// JSON logs to stdout (CloudWatch), filtered by `RUST_LOG`.
pub fn init_tracing() {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    tracing_subscriber::fmt()
        .json()
        .with_env_filter(filter)
        .with_current_span(false)
        .with_ansi(false)
        .without_time()
        .init();
}

/// The queue URLs from the environment.
pub fn queue_urls_from_env() -> anyhow::Result<QueueUrls> {
    Ok(QueueUrls {
        jobs: env("MAILWARD_JOBS_QUEUE_URL")?,
        jobs_dlq: env("MAILWARD_JOBS_DLQ_URL")?,
        deliveries: env("MAILWARD_DELIVERIES_QUEUE_URL")?,
        deliveries_dlq: env("MAILWARD_DELIVERIES_DLQ_URL")?,
    })
}

/// Builds the application state on the AWS adapters.
pub async fn state_from_env() -> anyhow::Result<AppState> {
    let clock: Arc<dyn Clock> = Arc::new(SystemClock);
    let ports = mailward_aws::ports_from_env(
        env("MAILWARD_TABLE")?,
        queue_urls_from_env()?,
        env("MAILWARD_MAIL_FROM")?,
        Arc::clone(&clock),
    )
    .await;
    let secret = env("MAILWARD_SECRET_KEY")?;
    anyhow::ensure!(
        secret.len() >= 32,
        "MAILWARD_SECRET_KEY must be at least 32 characters"
    );
    let mut config = Config::new(
        std::env::var("MAILWARD_BASE_URL").unwrap_or_default(),
        secret.into_bytes(),
    );
    // Behind API Gateway the client address is the last X-Forwarded-For hop.
    config.trust_proxy = true;
    let config = config.with_env_overrides().map_err(anyhow::Error::msg)?;
    let store = Arc::new(ports.store);
    let dns = match std::env::var("MAILWARD_DNS") {
        Ok(list) if !list.trim().is_empty() => {
            mailward_dns::ResolverSettings::from_server_list(&list)?
        }
        _ => mailward_dns::ResolverSettings::default(),
    };
    let resolver = Arc::new(mailward_dns::HickoryResolver::new(dns)?);
    let direct: Arc<dyn mailward_conflicts::DirectDns> = resolver.clone();
    Ok(AppState::new(
        store,
        Arc::new(ports.queue),
        Arc::new(ports.mailer),
        clock,
        resolver,
        config,
    )
    .with_direct_dns(direct))
}

/// Serves one group's routes as an API Gateway HTTP API Lambda.
pub async fn run_http(routes: OpenApiRouter<AppState>) -> Result<(), lambda_http::Error> {
    init_tracing();
    let state = state_from_env()
        .await
        .map_err(|e| lambda_http::Error::from(format!("{e:#}")))?;
    lambda_http::run(mailward_http::finish(routes, state)).await
}

/// Which queue an SQS record came from, by the queue name at the end of its ARN.
fn queue_of(arn: &str, urls: &QueueUrls) -> Option<QueueName> {
    let name = arn.rsplit(':').next()?;
    let last = |url: &str| url.rsplit('/').next().map(str::to_owned);
    if last(&urls.jobs).as_deref() == Some(name) {
        Some(QueueName::Jobs)
    } else if last(&urls.deliveries).as_deref() == Some(name) {
        Some(QueueName::Deliveries)
    } else {
        None
    }
}

/// Handles one SQS batch: every record that fails is reported back so only it is retried.
pub async fn handle_sqs_batch(
    state: &AppState,
    urls: &QueueUrls,
    event: SqsEvent,
) -> SqsBatchResponse {
    let mut response = SqsBatchResponse::default();
    for record in event.records {
        let id = record.message_id.clone().unwrap_or_default();
        let queue = record
            .event_source_arn
            .as_deref()
            .and_then(|arn| queue_of(arn, urls));
        let outcome = match (queue, record.body.as_deref()) {
            (Some(queue), Some(body)) => mailward_http::jobs::handle_message(state, queue, body)
                .await
                .map(|_| ()),
            _ => Err(anyhow::anyhow!(
                "record from an unknown queue or without a body"
            )),
        };
        if let Err(e) = outcome {
            tracing::warn!(message.id = %id, error = %e, "job failed; SQS will retry it");
            let mut failure = BatchItemFailure::default();
            failure.item_identifier = id;
            response.batch_item_failures.push(failure);
        }
    }
    response
}

/// Runs the queue-worker Lambda.
pub async fn run_queue_worker() -> Result<(), lambda_runtime::Error> {
    init_tracing();
    let state = state_from_env()
        .await
        .map_err(|e| lambda_runtime::Error::from(format!("{e:#}")))?;
    let urls = queue_urls_from_env().map_err(|e| lambda_runtime::Error::from(format!("{e:#}")))?;
    let state = &state;
    let urls = &urls;
    lambda_runtime::run(service_fn(move |event: LambdaEvent<SqsEvent>| async move {
        Ok::<_, lambda_runtime::Error>(handle_sqs_batch(state, urls, event.payload).await)
    }))
    .await
}

/// Publishes the outbox events of one DynamoDB Streams batch: every INSERT of an `OUTBOX#` item
/// is fanned out to its endpoints, then the outbox row is deleted. A failed record is reported
/// (by sequence number) so the stream retries from it; publishing twice only duplicates
/// deliveries with the same event id, which receivers dedupe.
pub async fn handle_stream_batch(state: &AppState, event: serde_json::Value) -> serde_json::Value {
    let mut failures = Vec::new();
    let records = event
        .get("Records")
        .and_then(|r| r.as_array())
        .cloned()
        .unwrap_or_default();
    for record in records {
        let sequence = record
            .pointer("/dynamodb/SequenceNumber")
            .and_then(|s| s.as_str())
            .unwrap_or_default()
            .to_owned();
        if let Err(e) = publish_stream_record(state, &record).await {
            tracing::warn!(stream.sequence = %sequence, error = %e, "publishing an outbox event failed; the stream will retry");
            failures.push(serde_json::json!({ "itemIdentifier": sequence }));
            // Later records of the shard are retried too; stop here to keep order per shard.
            break;
        }
    }
    serde_json::json!({ "batchItemFailures": failures })
}

/// The outbox row a stream record inserted, if it is one: `(pk, sk, event)`.
fn inserted_outbox_row(
    record: &serde_json::Value,
) -> anyhow::Result<Option<(String, String, mailward_http::repo::outbox::OutboxEvent)>> {
    if record.get("eventName").and_then(|n| n.as_str()) != Some("INSERT") {
        return Ok(None);
    }
    let image = record
        .pointer("/dynamodb/NewImage")
        .cloned()
        .unwrap_or_default();
    let item: serde_dynamo::Item = serde_json::from_value(image)?;
    let text = |name: &str| match item.inner().get(name) {
        Some(serde_dynamo::AttributeValue::S(s)) => Some(s.clone()),
        _ => None,
    };
    let (Some(pk), Some(sk)) = (text("pk"), text("sk")) else {
        return Ok(None);
    };
    if !pk.starts_with("OUTBOX#") {
        return Ok(None);
    }
    let Some(serde_dynamo::AttributeValue::B(data)) = item.inner().get("d") else {
        anyhow::bail!("outbox item {pk}/{sk} has no payload");
    };
    Ok(Some((pk, sk, serde_json::from_slice(data)?)))
}

async fn publish_stream_record(state: &AppState, record: &serde_json::Value) -> anyhow::Result<()> {
    let Some((pk, sk, event)) = inserted_outbox_row(record)? else {
        return Ok(());
    };
    mailward_http::webhooks::publisher::publish_event(state, &event).await?;
    state
        .store
        .delete(&pk, &sk, mailward_domain::store::Condition::None)
        .await?;
    Ok(())
}

/// Runs the sweep-coordinator Lambda (an EventBridge schedule): enqueues every due domain in
/// batches for `worker-queue`.
pub async fn run_sweep_coordinator() -> Result<(), lambda_runtime::Error> {
    init_tracing();
    let state = state_from_env()
        .await
        .map_err(|e| lambda_runtime::Error::from(format!("{e:#}")))?;
    let state = &state;
    lambda_runtime::run(service_fn(
        move |_event: LambdaEvent<serde_json::Value>| async move {
            let enqueued = mailward_http::sweep::coordinate(state)
                .await
                .map_err(|e| lambda_runtime::Error::from(format!("{e:#}")))?;
            Ok::<_, lambda_runtime::Error>(serde_json::json!({ "enqueued": enqueued }))
        },
    ))
    .await
}

/// Runs the stream-publisher Lambda (DynamoDB Streams on the table, new images).
pub async fn run_stream_publisher() -> Result<(), lambda_runtime::Error> {
    init_tracing();
    let state = state_from_env()
        .await
        .map_err(|e| lambda_runtime::Error::from(format!("{e:#}")))?;
    let state = &state;
    lambda_runtime::run(service_fn(
        move |event: LambdaEvent<serde_json::Value>| async move {
            Ok::<_, lambda_runtime::Error>(handle_stream_batch(state, event.payload).await)
        },
    ))
    .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_are_matched_to_their_queue_by_arn() {
        let urls = QueueUrls {
            jobs: "https://sqs.us-east-1.amazonaws.com/1/mailward-jobs".into(),
            jobs_dlq: "https://sqs.us-east-1.amazonaws.com/1/mailward-jobs-dlq".into(),
            deliveries: "https://sqs.us-east-1.amazonaws.com/1/mailward-deliveries".into(),
            deliveries_dlq: "https://sqs.us-east-1.amazonaws.com/1/mailward-deliveries-dlq".into(),
        };
        assert_eq!(
            queue_of("arn:aws:sqs:us-east-1:1:mailward-jobs", &urls),
            Some(QueueName::Jobs)
        );
        assert_eq!(
            queue_of("arn:aws:sqs:us-east-1:1:mailward-deliveries", &urls),
            Some(QueueName::Deliveries)
        );
        assert_eq!(queue_of("arn:aws:sqs:us-east-1:1:other", &urls), None);
    }

    #[test]
    fn stream_records_of_outbox_inserts_are_decoded() {
        use base64::Engine as _;
        let payload = serde_json::json!({
            "id": "evt_1", "type": "organization.updated", "org_id": "7d0b3a57-3b0e-4c36-9a63-2b8c1b0f5e11",
            "created": "2026-11-22T04:00:00Z", "object": {"name": "Acme"}
        });
        let b64 =
            base64::engine::general_purpose::STANDARD.encode(serde_json::to_vec(&payload).unwrap());
        let record = serde_json::json!({
            "eventName": "INSERT",
            "dynamodb": {"SequenceNumber": "1", "NewImage": {
                "pk": {"S": "OUTBOX#2"}, "sk": {"S": "000001#evt_1"}, "d": {"B": b64}, "v": {"N": "1"}
            }}
        });
        let (pk, sk, event) = inserted_outbox_row(&record).unwrap().unwrap();
        assert_eq!(
            (pk.as_str(), sk.as_str(), event.id.as_str()),
            ("OUTBOX#2", "000001#evt_1", "evt_1")
        );
        assert_eq!(event.object["name"], "Acme");
        let other = serde_json::json!({"eventName": "INSERT", "dynamodb": {"NewImage": {"pk": {"S": "ORG#x"}, "sk": {"S": "META"}}}});
        assert!(inserted_outbox_row(&other).unwrap().is_none());
        let removal = serde_json::json!({"eventName": "REMOVE", "dynamodb": {}});
        assert!(inserted_outbox_row(&removal).unwrap().is_none());
    }
}
