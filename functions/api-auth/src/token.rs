//! `POST /oauth/token` (authorization code with PKCE S256, refresh token) and
//! `POST /oauth/revoke` (RFC 7009).

use axum::Json;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, header};
use axum::response::{IntoResponse, Response};
use mailward_api_types::oauth::{OAuthErrorBody, TokenResponse};
use mailward_http::oauth::{form, oauth_error};
use mailward_http::{ApiError, AppState, Routes, links};
use mailward_oauth::{Urls, flow};
use serde::Deserialize;

/// Trades a code or a refresh token for tokens.
#[utoipa::path(post, path = "/oauth/token", tag = "oauth", security(()),
    request_body(content = mailward_api_types::oauth::TokenForm, content_type = "application/x-www-form-urlencoded",
        description = "`grant_type=authorization_code` with `code`, `redirect_uri`, `client_id` and `code_verifier` (PKCE S256), optionally `resource`; or `grant_type=refresh_token` with `refresh_token` and `client_id`. No client secret."),
    description = "The access token is an ES256 JWT for the MCP endpoint (`aud` = the resource, `{base_url}/mcp` by default), carrying the person (`sub`), the organization and role they picked, the scopes and the connection; it lives 15 minutes. A refresh token is issued only when the authorization asked for the `offline_access` scope (without it the connection ends with its access token); it rotates on every use: presenting an old one again revokes the whole connection. Grants other than these two (client credentials, the ID-JAG / JWT-bearer and token-exchange grants) answer `unsupported_grant_type`.",
    responses(
        (status = 200, description = "Tokens", body = TokenResponse),
        (status = 400, description = "`invalid_request`, `invalid_grant` (unknown, expired or reused code; PKCE mismatch; reused refresh token), `unsupported_grant_type`, `invalid_target`", body = OAuthErrorBody),
        (status = 401, description = "`invalid_client`: not the connector client", body = OAuthErrorBody),
    ))]
pub async fn token(
    State(app): State<AppState>,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Response, ApiError> {
    let urls = Urls::new(&app, &links::base_url(&app.config));
    let input: flow::TokenForm = form(&headers, &body).map_err(oauth_error)?;
    let tokens = flow::token(&app, &urls, input).await.map_err(oauth_error)?;
    Ok((
        [
            (header::CACHE_CONTROL, "no-store"),
            (header::PRAGMA, "no-cache"),
        ],
        Json(tokens),
    )
        .into_response())
}

#[derive(Deserialize)]
struct RevokeForm {
    token: Option<String>,
}

/// Revokes a token's connection.
#[utoipa::path(post, path = "/oauth/revoke", tag = "oauth", security(()),
    request_body(content = mailward_api_types::oauth::RevokeForm, content_type = "application/x-www-form-urlencoded",
        description = "`token` (a refresh or access token), optionally `token_type_hint` and `client_id`."),
    description = "RFC 7009: revokes the connection the token belongs to, so its refresh token and every access token of it stop working (the MCP endpoints check the connection on every call). An unknown or already revoked token also answers 200.",
    responses(
        (status = 200, description = "Revoked (or nothing to revoke)"),
        (status = 400, description = "`invalid_request`: no token", body = OAuthErrorBody),
    ))]
pub async fn revoke(
    State(app): State<AppState>,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Response, ApiError> {
    let urls = Urls::new(&app, &links::base_url(&app.config));
    let input: RevokeForm = form(&headers, &body).map_err(oauth_error)?;
    let token = input.token.filter(|t| !t.is_empty()).ok_or_else(|| {
        oauth_error(mailward_oauth::OAuthError::new(
            "invalid_request",
            "token is missing",
        ))
    })?;
    flow::revoke(&app, &urls, &token)
        .await
        .map_err(oauth_error)?;
    Ok(([(header::CACHE_CONTROL, "no-store")], "").into_response())
}

/// This module's routes.
pub fn routes() -> Routes {
    Routes::new()
        .routes(utoipa_axum::routes!(token))
        .routes(utoipa_axum::routes!(revoke))
}
