//! Mailward's HTTP conventions (SPEC §4, §5, §7, §8, §9): credentials, versions, the error body
//! and its one mapping from `ServiceError`, extractors that name the offending field,
//! pagination parameters, rate limits, the request middleware and the OpenAPI assembly.
//!
//! Routes are not here: each function crate (`functions/api-*`) owns its endpoint group's routes
//! and calls `mailward-services` for the work. This crate is the only one that knows status
//! codes, headers and error bodies; every route is registered through `utoipa_axum::routes!`,
//! so the OpenAPI document is generated from the same declarations that serve requests.

pub mod auth;
pub mod dns_quota;
pub mod error;
pub mod extract;
pub mod links;
pub mod middleware;
pub mod oauth;
pub mod openapi;
pub mod rate_limit;
pub mod request_id;
pub mod staff;
pub mod version;

pub use auth::{OptionalPrincipal, Principal};
pub use error::ApiError;
pub use mailward_services::{AppState, Config};

use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::response::IntoResponse;
use utoipa_axum::router::OpenApiRouter;

/// The routes of one endpoint group, before [`finish`].
pub type Routes = OpenApiRouter<AppState>;

async fn route_not_found(
    axum::extract::State(state): axum::extract::State<AppState>,
    uri: axum::http::Uri,
) -> axum::response::Response {
    // A SCIM client reads SCIM's error body (RFC 7644 §3.12), under its own base URL too.
    if uri.path().starts_with("/scim/v2/") {
        let body = mailward_services::scim::ScimError::not_found("resource").body();
        return (
            axum::http::StatusCode::NOT_FOUND,
            [(
                axum::http::header::CONTENT_TYPE,
                axum::http::HeaderValue::from_static("application/scim+json"),
            )],
            body.to_string(),
        )
            .into_response();
    }
    error::ApiError::route_not_found(&links::base_url(&state.config)).into_response()
}

/// Turns routes into the served router: the JSON 404 fallback, the body limit and the shared
/// middleware (request ids, HTTPS rule, credentials, rate limits, plain-text errors).
pub fn finish(routes: Routes, state: AppState) -> Router {
    let (router, _doc) = routes.split_for_parts();
    router
        .route_layer(axum::middleware::from_fn(middleware::route_template))
        .fallback(route_not_found)
        .layer(DefaultBodyLimit::max(state.config.max_body_bytes))
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            middleware::request_context,
        ))
        .layer(axum::middleware::from_fn(middleware::security_headers))
        .with_state(state)
}
