//! Lambda wiring: what every function's ten-line `main` calls.
//!
//! [`state_from_env`] builds the application state on the AWS adapters (DynamoDB, SQS, SES) once
//! per cold start from the variables `template.yaml` sets; [`run_http`] serves a group's routes
//! through `lambda_http`; [`run_events`] runs an event handler (a worker function's) with that
//! state. The handlers themselves live in the worker crates.

/// mimalloc: report ingestion and the sweep allocate many small short-lived values (parsed
/// fields, rows, encoded items); glibc's allocator spent about a fifth of the ingest CPU in
/// `malloc`/`free`/`malloc_consolidate`.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use anyhow::Context as _;
use lambda_runtime::{LambdaEvent, service_fn};
pub use mailward_aws::QueueUrls;
use mailward_domain::{Clock, SystemClock};
use mailward_services::{AppState, Config};
use serde::Serialize;
use serde::de::DeserializeOwned;
use std::future::Future;
use std::sync::Arc;
use utoipa_axum::router::OpenApiRouter;

fn env(name: &str) -> anyhow::Result<String> {
    std::env::var(name).with_context(|| format!("environment variable {name} is not set"))
}

/// JSON logs to stdout (CloudWatch), filtered by `RUST_LOG`; the operator's figures as
/// embedded-metric-format lines beside them (`mailward_app::metrics`).
pub fn init_tracing() {
    mailward_services::metrics::emit_cloudwatch(true);
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
    // Links (errors, discovery documents, mail) are built from this, never from the request's
    // `Host`, which the client chooses; the template sets it (BaseUrl, else the API's URL).
    let base_url = env("MAILWARD_BASE_URL")?;
    anyhow::ensure!(
        base_url.starts_with("https://") || base_url.starts_with("http://"),
        "MAILWARD_BASE_URL must be the service's public URL, such as https://api.example.com"
    );
    let mut config = Config::new(base_url, secret.into_bytes());
    // Behind API Gateway the client address is the last X-Forwarded-For hop.
    config.trust_proxy = true;
    let mut config = config.with_env_overrides().map_err(anyhow::Error::msg)?;
    let store = Arc::new(ports.store);
    let mut dns = match std::env::var("MAILWARD_DNS") {
        Ok(list) if !list.trim().is_empty() => {
            mailward_dns::ResolverSettings::from_server_list(&list)?
        }
        _ => mailward_dns::ResolverSettings::default(),
    };
    dns.max_concurrency = match std::env::var("MAILWARD_DNS_CONCURRENCY") {
        Ok(value) => mailward_dns::parse_concurrency(&value)?,
        // Lambda's hard open-file limit is 1,024: this keeps the bound at 512 there.
        Err(_) => mailward_dns::default_concurrency(),
    };
    // The sweep may hold half of the resolver's slots; the rest stay free for API requests.
    config.sweep_dns_in_flight = (dns.max_concurrency / 2).max(1);
    let resolver = Arc::new(mailward_dns::HickoryResolver::new(dns)?);
    let direct: Arc<dyn mailward_conflicts::DirectDns> = resolver.clone();
    let state = AppState::new(
        store,
        Arc::new(ports.queue),
        Arc::new(ports.mailer),
        clock,
        resolver,
        config,
    )
    .with_direct_dns(direct);
    // The hosted zone in Route 53 where the deployment names its zones; otherwise the records
    // stay in the table (served by nothing on AWS: hosted DMARC then never becomes ready).
    let state = match std::env::var("MAILWARD_ROUTE53_ZONES") {
        Ok(list) if !list.trim().is_empty() => {
            let zones = mailward_aws::route53::parse_zones(&list).map_err(anyhow::Error::msg)?;
            let sdk = mailward_aws::aws_config_from_env().await;
            state.with_zone(Arc::new(mailward_aws::route53::Route53Zone::from_config(
                &sdk, zones,
            )))
        }
        _ => state,
    };
    // MTA-STS policy hosts behind CloudFront with ACM certificates, forwarding to this API.
    let state = match std::env::var("MAILWARD_POLICY_ORIGIN") {
        Ok(origin) if !origin.trim().is_empty() => {
            let sdk = mailward_aws::aws_config_from_env().await;
            state.with_fronts(Arc::new(
                mailward_aws::policy_fronts::CloudFrontFronts::new(&sdk, origin.trim()),
            ))
        }
        _ => state,
    };
    // DNS connections read customers' Route 53 zones with their keys or an assumed role.
    let state = state.with_dns_hosts(Arc::new(mailward_aws::dns_hosts::Route53Hosts::new(
        mailward_aws::aws_config_from_env().await,
    )));
    // Billing on Stripe where the function was given a secret key (else billing answers 503).
    let state = match mailward_billing::adapter(&state, false).map_err(anyhow::Error::msg)? {
        Some(payments) => state.with_payments(payments),
        None => state,
    };
    // Object storage where the function was given a bucket (support attachments).
    Ok(match std::env::var("MAILWARD_OBJECTS_BUCKET") {
        Ok(bucket) if !bucket.trim().is_empty() => {
            let sdk = mailward_aws::aws_config_from_env().await;
            state.with_objects(Arc::new(mailward_aws::S3ObjectStore::new(
                &sdk,
                bucket.trim(),
            )))
        }
        _ => state,
    })
}

/// The service [`run_http`] hands to `lambda_http`: one group's routes, finished with the shared
/// conventions over `state`. Public so tests can push API Gateway payloads through
/// `lambda_http`'s own conversion to exactly what a function serves (`tests/api/lambda`).
pub fn http_service(routes: OpenApiRouter<AppState>, state: AppState) -> axum::Router {
    mailward_http::finish(routes, state)
}

/// Serves one group's routes as an API Gateway HTTP API Lambda.
pub async fn run_http(routes: OpenApiRouter<AppState>) -> Result<(), lambda_http::Error> {
    init_tracing();
    let state = state_from_env()
        .await
        .map_err(|e| lambda_http::Error::from(format!("{e:#}")))?;
    lambda_http::run(http_service(routes, state)).await
}

/// Runs an event-driven worker: builds the state once per cold start, then calls `handler`
/// with it for every event.
pub async fn run_events<E, R, F, Fut>(handler: F) -> Result<(), lambda_runtime::Error>
where
    E: DeserializeOwned + Send + 'static,
    R: Serialize + Send + 'static,
    F: Fn(AppState, E) -> Fut + Send + Sync + Clone + 'static,
    Fut: Future<Output = Result<R, lambda_runtime::Error>> + Send,
{
    init_tracing();
    let state = state_from_env()
        .await
        .map_err(|e| lambda_runtime::Error::from(format!("{e:#}")))?;
    lambda_runtime::run(service_fn(move |event: LambdaEvent<E>| {
        let (handler, state) = (handler.clone(), state.clone());
        async move { handler(state, event.payload).await }
    }))
    .await
}
