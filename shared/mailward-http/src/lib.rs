//! Mailward's HTTP surface: one router per endpoint group, shared by the Lambda functions and the
//! local stack, plus the conventions every route follows (SPEC §4, §5, §7, §8, §9).
//!
//! This is the only crate that knows status codes, headers and error bodies. Handlers reach the
//! outside world only through the ports in [`state::App`]; they never know which adapters run.
//! Every route is registered through `utoipa_axum::routes!`, so the OpenAPI document
//! (`GET /swagger.json`) is generated from the same declarations that serve requests.

pub mod auth;
pub mod config;
pub mod dkim_discovery;
pub mod error;
pub mod extract;
pub mod jobs;
pub mod middleware;
pub mod mta_sts_fetch;
pub mod pagination;
pub mod rate_limit;
pub mod repo;
pub mod routes;
pub mod secret_box;
pub mod state;
pub mod sweep;
pub mod version;
pub mod views;
pub mod views_domain;
pub mod webhooks;

pub use config::Config;
pub use state::AppState;

use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::response::IntoResponse;
use utoipa_axum::router::OpenApiRouter;

/// Public group: health, signup and the OpenAPI document (the `api-public` function).
pub fn public_routes() -> OpenApiRouter<AppState> {
    routes::health::routes()
        .merge(routes::signup::routes())
        .merge(routes::openapi::routes())
}

/// Account group: API keys and organizations (the `api-account` function).
pub fn account_routes() -> OpenApiRouter<AppState> {
    routes::api_keys::routes().merge(routes::organizations::routes())
}

/// Domains group (the `api-domains` function).
pub fn domain_routes() -> OpenApiRouter<AppState> {
    routes::domains::routes()
        .merge(routes::domains_bulk::routes())
        .merge(routes::records::routes())
        .merge(routes::snapshots::routes())
}

/// Webhook group: endpoints, deliveries and the event catalogue (the `api-webhooks` function).
pub fn webhook_routes() -> OpenApiRouter<AppState> {
    routes::webhooks::routes()
}

/// Tools group: the DNS-resolving tools (the `api-tools` function).
pub fn tool_routes() -> OpenApiRouter<AppState> {
    routes::tools::routes()
        .merge(routes::sources::routes())
        .merge(routes::audit::routes())
}

/// Every group, as the local stack serves them.
pub fn all_routes() -> OpenApiRouter<AppState> {
    public_routes()
        .merge(account_routes())
        .merge(webhook_routes())
        .merge(tool_routes())
        .merge(domain_routes())
}

async fn route_not_found(
    axum::extract::State(state): axum::extract::State<AppState>,
    headers: axum::http::HeaderMap,
) -> impl IntoResponse {
    error::ApiError::route_not_found(&state.config.base_url_for(&headers))
}

/// Turns a group's routes into the served router: the JSON 404 fallback, the body limit and the
/// shared middleware (request ids, HTTPS rule, credentials, rate limits, plain-text errors).
pub fn finish(routes: OpenApiRouter<AppState>, state: AppState) -> Router {
    let (router, _doc) = routes.split_for_parts();
    router
        .fallback(route_not_found)
        .layer(DefaultBodyLimit::max(state.config.max_body_bytes))
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            middleware::request_context,
        ))
        .with_state(state)
}
