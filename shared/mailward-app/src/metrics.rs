//! The figures an operator watches: request counts and latency by route and status, sweep lag,
//! queue depth and dead letters, ingestion by outcome, webhook deliveries by result, DNS
//! queries by outcome.
//!
//! One process-wide registry (the Prometheus project's `prometheus-client`). Events are
//! counted where they happen ([`request`], [`ingested`], [`delivered`]); the figures that
//! belong to the whole deployment (sweep lag, queue depth) are read from the store and the
//! queue when asked ([`refresh_gauges`]). Two ways out:
//! - `GET /metrics` renders the registry in the OpenMetrics text format ([`render`]): the
//!   local process's figures are the service's;
//! - on AWS every Lambda instance holds only its own counts, so [`emit_cloudwatch`] turns on
//!   CloudWatch embedded-metric-format lines on standard output (namespace `Mailward`), one
//!   per counted event, and the sweep's schedule emits the gauges every five minutes.

use crate::state::AppState;
use mailward_domain::queue::QueueName;
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;
use std::sync::LazyLock;
use std::sync::atomic::{AtomicBool, Ordering};

/// The OpenMetrics content type `GET /metrics` answers with.
pub const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RouteLabels {
    method: String,
    route: String,
    status: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct OutcomeLabels {
    outcome: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct QueueLabels {
    queue: String,
}

type LatencyFamily = Family<RouteLabels, Histogram, fn() -> Histogram>;

struct Metrics {
    registry: Registry,
    requests: Family<RouteLabels, Counter>,
    latency: LatencyFamily,
    ingested: Family<OutcomeLabels, Counter>,
    deliveries: Family<OutcomeLabels, Counter>,
}

fn latency_histogram() -> Histogram {
    // 5 ms to about 10 s.
    Histogram::new(exponential_buckets(0.005, 2.0, 12))
}

static METRICS: LazyLock<Metrics> = LazyLock::new(|| {
    let mut registry = Registry::with_prefix("mailward");
    let requests = Family::<RouteLabels, Counter>::default();
    let latency: LatencyFamily = Family::new_with_constructor(latency_histogram);
    let ingested = Family::<OutcomeLabels, Counter>::default();
    let deliveries = Family::<OutcomeLabels, Counter>::default();
    registry.register(
        "http_requests",
        "HTTP requests served, by method, route template and status",
        requests.clone(),
    );
    registry.register(
        "http_request_duration_seconds",
        "Time to serve an HTTP request, by method, route template and status",
        latency.clone(),
    );
    registry.register(
        "reports_ingested",
        "Report deliveries ingested, by outcome",
        ingested.clone(),
    );
    registry.register(
        "webhook_deliveries",
        "Webhook delivery attempts, by result (success, failure)",
        deliveries.clone(),
    );
    Metrics {
        registry,
        requests,
        latency,
        ingested,
        deliveries,
    }
});

static CLOUDWATCH: AtomicBool = AtomicBool::new(false);

/// Turns CloudWatch embedded-metric-format lines on (the Lambda entry points do).
pub fn emit_cloudwatch(enabled: bool) {
    CLOUDWATCH.store(enabled, Ordering::Relaxed);
}

/// Prints one embedded-metric-format line: `values` under dimensions `dimensions`.
fn emf(dimensions: &[(&str, &str)], values: &[(&str, f64, &str)]) {
    if CLOUDWATCH.load(Ordering::Relaxed) {
        println!("{}", emf_line(dimensions, values));
    }
}

/// One embedded-metric-format document: CloudWatch reads `_aws` and turns the named members
/// into metrics of namespace `Mailward` with the dimensions given.
fn emf_line(dimensions: &[(&str, &str)], values: &[(&str, f64, &str)]) -> serde_json::Value {
    let now_ms = time::OffsetDateTime::now_utc().unix_timestamp_nanos() / 1_000_000;
    let mut line = serde_json::json!({
        "_aws": {
            "Timestamp": i64::try_from(now_ms).unwrap_or_default(),
            "CloudWatchMetrics": [{
                "Namespace": "Mailward",
                "Dimensions": [dimensions.iter().map(|(k, _)| *k).collect::<Vec<_>>()],
                "Metrics": values.iter().map(|(name, _, unit)| serde_json::json!({"Name": name, "Unit": unit})).collect::<Vec<_>>(),
            }],
        },
    });
    for (key, value) in dimensions {
        line[*key] = serde_json::json!(value);
    }
    for (name, value, _) in values {
        line[*name] = serde_json::json!(value);
    }
    line
}

/// Counts a served request: its route template (`unmatched` when no route matched), method,
/// status and duration.
pub fn request(method: &str, route: &str, status: u16, seconds: f64) {
    let labels = RouteLabels {
        method: method.to_owned(),
        route: route.to_owned(),
        status: status.to_string(),
    };
    METRICS.requests.get_or_create(&labels).inc();
    METRICS.latency.get_or_create(&labels).observe(seconds);
    emf(
        &[("route", route), ("status", &labels.status)],
        &[
            ("Requests", 1.0, "Count"),
            ("Latency", seconds * 1000.0, "Milliseconds"),
        ],
    );
}

/// Counts an ingested delivery by its outcome (`imported`, `duplicate`, `unattributed`…).
pub fn ingested(outcome: &str) {
    let labels = OutcomeLabels {
        outcome: outcome.to_owned(),
    };
    METRICS.ingested.get_or_create(&labels).inc();
    emf(
        &[("outcome", outcome)],
        &[("ReportsIngested", 1.0, "Count")],
    );
}

/// Counts a webhook delivery attempt.
pub fn delivered(success: bool) {
    let outcome = if success { "success" } else { "failure" };
    let labels = OutcomeLabels {
        outcome: outcome.to_owned(),
    };
    METRICS.deliveries.get_or_create(&labels).inc();
    emf(
        &[("result", outcome)],
        &[("WebhookDeliveries", 1.0, "Count")],
    );
}

/// The deployment-wide figures, read when asked (never shared between callers, so two
/// deployments in one process, as in the tests, never mix).
struct Gauges {
    registry: Registry,
}

/// Reads the deployment-wide figures (sweep lag, queue depths) and this process's DNS counts
/// into a registry of their own; on AWS also emits them as
/// embedded-metric-format lines.
pub async fn refresh_gauges(state: &AppState) -> anyhow::Result<()> {
    gauges(state).await.map(|_| ())
}

async fn gauges(state: &AppState) -> anyhow::Result<Gauges> {
    let mut registry = Registry::with_prefix("mailward");
    let now = state.clock.unix();
    let mut oldest = now;
    for shard in 0..mailward_store::keys::SWEEP_SHARDS {
        if let Some(due) =
            mailward_store::domains::oldest_due(state.store.as_ref(), shard, now).await?
        {
            oldest = oldest.min(due);
        }
    }
    let sweep_lag = Gauge::<i64>::default();
    sweep_lag.set(now - oldest);
    registry.register(
        "sweep_lag_seconds",
        "How long the longest-waiting due domain has been due (0: the sweep is current)",
        sweep_lag,
    );
    emf(&[], &[("SweepLag", (now - oldest) as f64, "Seconds")]);
    let families: [(&str, &str, Family<QueueLabels, Gauge>); 3] = [
        (
            "queue_ready_messages",
            "Messages ready to be received, by queue",
            Family::default(),
        ),
        (
            "queue_waiting_messages",
            "Messages delayed or in flight, by queue",
            Family::default(),
        ),
        (
            "queue_dead_letters",
            "Messages in the dead-letter queue, by queue",
            Family::default(),
        ),
    ];
    for queue in QueueName::ALL {
        let depth = state.queue.depth(queue).await?;
        let labels = QueueLabels {
            queue: queue.as_str().to_owned(),
        };
        for ((_, _, family), value) in families
            .iter()
            .zip([depth.ready, depth.waiting, depth.dead])
        {
            family
                .get_or_create(&labels)
                .set(i64::try_from(value).unwrap_or(i64::MAX));
        }
        emf(
            &[("queue", queue.as_str())],
            &[
                ("QueueReady", depth.ready as f64, "Count"),
                ("QueueWaiting", depth.waiting as f64, "Count"),
                ("DeadLetters", depth.dead as f64, "Count"),
            ],
        );
    }
    for (name, help, family) in families {
        registry.register(name, help, family);
    }
    // The resolver keeps its own process-wide counts (mailward-dns knows no registry).
    let dns = Family::<OutcomeLabels, Counter>::default();
    for (outcome, count) in mailward_dns::stats::counts() {
        dns.get_or_create(&OutcomeLabels {
            outcome: outcome.to_owned(),
        })
        .inc_by(count);
    }
    registry.register(
        "dns_queries",
        "DNS lookups of this process, by outcome (cached: answered from the cache)",
        dns,
    );
    Ok(Gauges { registry })
}

/// The process's counters and the deployment's gauges in the OpenMetrics text format.
pub async fn render(state: &AppState) -> anyhow::Result<String> {
    let gauges = gauges(state).await?;
    let mut out = String::new();
    prometheus_client::encoding::text::encode_registry(&mut out, &METRICS.registry)?;
    prometheus_client::encoding::text::encode_registry(&mut out, &gauges.registry)?;
    prometheus_client::encoding::text::encode_eof(&mut out)?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_embedded_metric_line_names_its_dimensions_and_metrics() {
        let line = emf_line(
            &[("route", "/domains"), ("status", "200")],
            &[
                ("Requests", 1.0, "Count"),
                ("Latency", 12.5, "Milliseconds"),
            ],
        );
        let spec = &line["_aws"]["CloudWatchMetrics"][0];
        assert_eq!(spec["Namespace"], "Mailward");
        assert_eq!(spec["Dimensions"], serde_json::json!([["route", "status"]]));
        assert_eq!(
            spec["Metrics"][1],
            serde_json::json!({"Name": "Latency", "Unit": "Milliseconds"})
        );
        assert_eq!(
            (line["route"].as_str(), line["Latency"].as_f64()),
            (Some("/domains"), Some(12.5))
        );
        assert!(
            line["_aws"]["Timestamp"]
                .as_i64()
                .is_some_and(|t| t > 1_700_000_000_000)
        );
    }

    #[test]
    fn counted_events_appear_in_the_registry() {
        delivered(true);
        delivered(false);
        ingested("refused");
        let mut out = String::new();
        prometheus_client::encoding::text::encode(&mut out, &METRICS.registry).unwrap();
        assert!(
            out.contains("mailward_webhook_deliveries_total{outcome=\"success\"}"),
            "{out}"
        );
        assert!(
            out.contains("mailward_webhook_deliveries_total{outcome=\"failure\"}"),
            "{out}"
        );
        assert!(
            out.contains("mailward_reports_ingested_total{outcome=\"refused\"}"),
            "{out}"
        );
        assert!(out.ends_with("# EOF\n"));
    }
}
