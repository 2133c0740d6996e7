//! The OAuth and MCP wire shapes the HTTP layer owns: RFC 6749 error bodies, form bodies, and
//! the RFC 9728 `WWW-Authenticate` challenge of the MCP endpoints.

use crate::ApiError;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use mailward_oauth::OAuthError;
use serde::de::DeserializeOwned;
use serde_json::json;

/// An RFC 6749 §5.2 error response: 401 for a client refused, 503 when the service failed,
/// 400 otherwise; never cached.
pub fn oauth_error(e: OAuthError) -> ApiError {
    let status = match e.error {
        "invalid_client" => StatusCode::UNAUTHORIZED,
        "server_error" => StatusCode::SERVICE_UNAVAILABLE,
        _ => StatusCode::BAD_REQUEST,
    };
    ApiError::new(status, e.error, e.description.clone())
        .with_raw_body(json!({"error": e.error, "error_description": e.description}))
        .header(header::CACHE_CONTROL, HeaderValue::from_static("no-store"))
}

/// Parses an `application/x-www-form-urlencoded` body (the token and revocation endpoints);
/// anything else is `invalid_request`.
pub fn form<T: DeserializeOwned>(headers: &HeaderMap, body: &[u8]) -> Result<T, OAuthError> {
    let form_type = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|v| {
            v.trim()
                .eq_ignore_ascii_case("application/x-www-form-urlencoded")
        });
    if !form_type {
        return Err(OAuthError::new(
            "invalid_request",
            "send the parameters as application/x-www-form-urlencoded",
        ));
    }
    serde_html_form::from_bytes(body)
        .map_err(|e| OAuthError::new("invalid_request", format!("malformed form body: {e}")))
}

/// The 401 of an MCP endpoint (SPEC §5 rule 6, RFC 9728 §5.1): a Bearer challenge pointing at
/// the endpoint's own protected-resource metadata, with `error="invalid_token"` when a token was
/// sent, or `insufficient_scope` naming the scopes.
pub fn mcp_unauthorized(
    metadata_url: &str,
    message: &str,
    error: Option<&str>,
    scope: Option<&str>,
) -> ApiError {
    let mut challenge = format!("Bearer resource_metadata=\"{metadata_url}\"");
    if let Some(error) = error {
        challenge.push_str(&format!(", error=\"{error}\""));
    }
    if let Some(scope) = scope {
        challenge.push_str(&format!(", scope=\"{scope}\""));
    }
    let mut e = ApiError::new(
        StatusCode::UNAUTHORIZED,
        "authentication_required",
        message.to_owned(),
    );
    if let Ok(value) = HeaderValue::from_str(&challenge) {
        e = e.header(header::WWW_AUTHENTICATE, value);
    }
    e
}
