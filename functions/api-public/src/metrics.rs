//! `GET /metrics`: the operator's figures for Prometheus (an extension beyond SPEC §5).

use axum::extract::{Extension, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use mailward_http::middleware::ClientIp;
use mailward_http::{ApiError, AppState, Routes};
use mailward_services::metrics;

/// The registry in the OpenMetrics text format.
#[utoipa::path(get, path = "/metrics", tag = "operations",
    security(("metrics_token" = [])),
    description = "An extension beyond SPEC §5, for the operator of a deployment: the figures to \
watch, in the OpenMetrics text format Prometheus scrapes: `mailward_http_requests_total` and \
`mailward_http_request_duration_seconds` by method, route template and status; \
`mailward_sweep_lag_seconds` (how long the longest-waiting due domain has waited); \
`mailward_queue_ready_messages`, `mailward_queue_waiting_messages` and \
`mailward_queue_dead_letters` by queue; `mailward_reports_ingested_total` by outcome; \
`mailward_webhook_deliveries_total` by result; `mailward_dns_queries_total` by outcome. The \
sweep lag and the queues are the deployment's, read when asked; the counts are this process's \
since it started: the whole service on the local stack, one instance on AWS, where the same \
figures go to CloudWatch as embedded-metric-format logs (namespace `Mailward`) instead. \
Protected by the `metrics_token` scheme: with a token configured (`MAILWARD_METRICS_TOKEN`, \
`--metrics-token`) the request must carry it as a bearer token (401 otherwise); without one, \
only loopback clients may read it (403 otherwise), so a deployment never exposes it by default.",
    responses(
        (status = 200, description = "The figures", content_type = "application/openmetrics-text", body = String),
        (status = 401, description = "The metrics token is missing or wrong", body = mailward_api_types::ErrorBody),
        (status = 403, description = "No metrics token is configured and the client is not on loopback", body = mailward_api_types::ErrorBody),
    ))]
pub async fn metrics_page(
    State(app): State<AppState>,
    ip: Option<Extension<ClientIp>>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    match app.config.metrics_token.as_deref() {
        Some(token) => {
            let given = headers
                .get(header::AUTHORIZATION)
                .and_then(|v| v.to_str().ok())
                .and_then(|v| {
                    v.strip_prefix("Bearer ")
                        .or_else(|| v.strip_prefix("bearer "))
                })
                .unwrap_or_default()
                .trim();
            if !mailward_domain::secrets::constant_time_eq(given.as_bytes(), token.as_bytes()) {
                return Err(ApiError::new(
                    StatusCode::UNAUTHORIZED,
                    "unauthorized",
                    "send the metrics token as a bearer token",
                ));
            }
        }
        None => {
            let loopback = ip
                .and_then(|Extension(ClientIp(ip))| ip.parse::<std::net::IpAddr>().ok())
                .is_some_and(|ip| ip.is_loopback());
            if !loopback {
                return Err(ApiError::new(
                    StatusCode::FORBIDDEN,
                    "metrics_protected",
                    "no metrics token is configured, so only loopback clients may read /metrics",
                ));
            }
        }
    }
    // The gauges read the store and the queue: their outage is a 503 to retry, as elsewhere.
    let text = metrics::render(&app)
        .await
        .map_err(|e| ApiError::from(mailward_services::ServiceError::unavailable(e)))?;
    Ok(([(header::CONTENT_TYPE, metrics::CONTENT_TYPE)], text).into_response())
}

/// Routes of this module.
pub fn routes() -> Routes {
    Routes::new().routes(utoipa_axum::routes!(metrics_page))
}
