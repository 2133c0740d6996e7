//! The local stack as a process of its own, for the tests that kill it with SIGKILL while it
//! works (`tests/api/api/killed.rs`): `stack DATA_DIR LISTEN_ADDR EXTRA_CA_PEM`. Webhook
//! deliveries may go to loopback receivers that present a certificate of `EXTRA_CA_PEM`; no DNS
//! server answers; nothing is swept unless asked.
//!
//! With `STACK_DYNAMO_TABLE` and `STACK_SQS_PREFIX` set (and `MOTO_ENDPOINT`), the store and
//! the queue are that DynamoDB table and those SQS queues in moto (the AWS pass): a restarted
//! process finds what the killed one left there. Mail stays in `DATA_DIR/outbox`.

use mailward_local_stack::{LocalStack, Ports, Settings};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// The table and queues in moto the environment names, if it names them.
async fn moto_ports() -> Result<Option<Ports>, Box<dyn std::error::Error>> {
    let (Ok(table), Ok(prefix)) = (
        std::env::var("STACK_DYNAMO_TABLE"),
        std::env::var("STACK_SQS_PREFIX"),
    ) else {
        return Ok(None);
    };
    let endpoint = std::env::var("MOTO_ENDPOINT")?;
    let config = mailward_aws::emulator_config(&endpoint).await;
    let sqs = aws_sdk_sqs::Client::new(&config);
    // Creating a queue that exists with the same attributes answers its URL.
    let urls = mailward_aws::create_queues(&sqs, &prefix, 5)
        .await
        .map_err(|e| e.to_string())?;
    let clock: Arc<dyn mailward_domain::Clock> = Arc::new(mailward_domain::SystemClock);
    Ok(Some(Ports {
        store: Arc::new(mailward_aws::DynamoStore::new(
            aws_sdk_dynamodb::Client::new(&config),
            table,
            clock,
        )),
        queue: Arc::new(mailward_aws::SqsQueue::new(sqs, urls)),
    }))
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let usage = "usage: stack DATA_DIR LISTEN_ADDR EXTRA_CA_PEM";
    let data = PathBuf::from(args.next().ok_or(usage)?);
    let listen = args.next().ok_or(usage)?.parse()?;
    let ca = PathBuf::from(args.next().ok_or(usage)?);
    let mut settings = Settings::new(data);
    settings.listen = listen;
    settings.dns = Some("127.0.0.1:9".into());
    settings.webhook_allow_loopback = true;
    settings.extra_ca = Some(ca);
    settings.poll_interval = Duration::from_millis(50);
    settings.sweep_interval = None;
    settings.reconcile_interval = None;
    settings.evaluate_new_domains = false;
    settings.ports = moto_ports().await?;
    let _stack = LocalStack::start(settings).await?;
    std::future::pending::<()>().await;
    Ok(())
}
