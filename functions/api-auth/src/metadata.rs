//! `GET /.well-known/oauth-authorization-server` (RFC 8414), `GET /oauth/jwks` (the access-token
//! keys) and `POST /oauth/register`, which refuses dynamic client registration (RFC 7591) with
//! 403 naming the connector client to use.

use axum::Json;
use axum::extract::State;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use mailward_http::oauth::oauth_error;
use mailward_http::{ApiError, AppState, Routes, links};
use mailward_oauth::{SCOPES, Urls, flow, signing};
use serde_json::{Value, json};

/// The authorization server's metadata for a request's base URL.
pub fn document(app: &AppState, urls: &Urls) -> Value {
    let issuer = &urls.issuer;
    json!({
        "issuer": issuer,
        "authorization_endpoint": format!("{issuer}/oauth/authorize"),
        "token_endpoint": format!("{issuer}/oauth/token"),
        "revocation_endpoint": format!("{issuer}/oauth/revoke"),
        "registration_endpoint": format!("{issuer}/oauth/register"),
        "jwks_uri": format!("{issuer}/oauth/jwks"),
        "response_types_supported": ["code"],
        "response_modes_supported": ["query"],
        "grant_types_supported": ["authorization_code", "refresh_token"],
        "code_challenge_methods_supported": ["S256"],
        "token_endpoint_auth_methods_supported": ["none"],
        "revocation_endpoint_auth_methods_supported": ["none"],
        "scopes_supported": SCOPES,
        "authorization_response_iss_parameter_supported": true,
        "client_id_metadata_document_supported": false,
        "service_documentation": format!("{}/docs", urls.base),
        "mailward_connector_client_id": app.config.oauth_client_id,
    })
}

/// RFC 8414 metadata.
#[utoipa::path(get, path = "/.well-known/oauth-authorization-server", tag = "oauth", security(()),
    description = "The authorization server's metadata (RFC 8414): the authorization, token and revocation endpoints, `code_challenge_methods_supported: [\"S256\"]`, the grant types (`authorization_code`, `refresh_token`) and every scope. Every MCP client uses the one public connector client (`mailward_connector_client_id`, no secret); `registration_endpoint` answers 403 naming it. No `agent_auth` block is published and the ID-JAG grant is not accepted.",
    responses((status = 200, description = "The metadata", body = Object)))]
pub async fn authorization_server(State(app): State<AppState>) -> Response {
    let urls = Urls::new(&app, &links::base_url(&app.config));
    (
        [(header::CACHE_CONTROL, "public, max-age=3600")],
        Json(document(&app, &urls)),
    )
        .into_response()
}

/// The access-token signing keys.
#[utoipa::path(get, path = "/oauth/jwks", tag = "oauth", security(()),
    description = "The public keys (JWKS, RFC 7517) that verify MCP access tokens: ES256 (P-256). During a key rotation the previous key stays listed until the tokens it signed expired (15 minutes).",
    responses((status = 200, description = "The JWKS", body = Object),
        (status = 503, description = "The keys could not be read", body = mailward_api_types::oauth::OAuthErrorBody)))]
pub async fn jwks(State(app): State<AppState>) -> Result<Response, ApiError> {
    let keys = signing::jwks(&app).await.map_err(oauth_error)?;
    Ok(([(header::CACHE_CONTROL, "public, max-age=300")], Json(keys)).into_response())
}

/// Refuses dynamic client registration.
#[utoipa::path(post, path = "/oauth/register", tag = "oauth", security(()),
    description = "Dynamic client registration (RFC 7591) is not offered: every MCP client uses the public connector client. Always 403, naming the client id to use.",
    responses((status = 403, description = "Registration refused; `client_id` names the client to use", body = Object)))]
pub async fn register(State(app): State<AppState>) -> Response {
    let message = flow::client_refused(&app, "(registration)");
    let mut response = (
        StatusCode::FORBIDDEN,
        Json(json!({
            "error": "access_denied",
            "error_description": message,
            "client_id": app.config.oauth_client_id,
        })),
    )
        .into_response();
    response
        .headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

/// This module's routes.
pub fn routes() -> Routes {
    Routes::new()
        .routes(utoipa_axum::routes!(authorization_server))
        .routes(utoipa_axum::routes!(jwks))
        .routes(utoipa_axum::routes!(register))
}
