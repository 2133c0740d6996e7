//! The authorization server's REST parts: a person's connections (one per consent to the MCP
//! connector client) and the OAuth/discovery documents' error body.

use serde::{Deserialize, Serialize};
use time::OffsetDateTime;
use utoipa::ToSchema;
use uuid::Uuid;

/// One connection: an assistant the person connected through the connector client.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, PartialEq, Eq)]
pub struct Connection {
    /// The connection id (revoke it with `DELETE /oauth/connections/{id}`).
    pub id: Uuid,
    /// The organization the person picked at sign-in.
    pub organization_id: Uuid,
    /// The client it was issued to (the connector client id).
    pub client_id: String,
    /// The granted scopes.
    pub scopes: Vec<String>,
    /// The MCP resource its tokens are for.
    pub resource: String,
    /// When the person consented.
    #[serde(with = "time::serde::rfc3339")]
    pub created_at: OffsetDateTime,
    /// When its refresh token was last used.
    #[serde(with = "time::serde::rfc3339")]
    pub last_used_at: OffsetDateTime,
}

/// The caller's connections, newest first.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, PartialEq, Eq)]
pub struct ConnectionList {
    /// The connections.
    pub data: Vec<Connection>,
}

/// An OAuth error (RFC 6749 §5.2), as the token and revocation endpoints answer it.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, PartialEq, Eq)]
pub struct OAuthErrorBody {
    /// `invalid_request`, `invalid_client`, `invalid_grant`, `unsupported_grant_type`,
    /// `invalid_scope`, `invalid_target`, `server_error`.
    pub error: String,
    /// For a person.
    pub error_description: String,
}

/// A successful token response (RFC 6749 §5.1).
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct TokenResponse {
    /// The ES256 JWT for the MCP endpoint.
    pub access_token: String,
    /// `Bearer`.
    pub token_type: String,
    /// Seconds the access token lives.
    pub expires_in: i64,
    /// The next refresh token (rotated on every use); only when `offline_access` was granted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refresh_token: Option<String>,
    /// The granted scopes, space separated.
    pub scope: String,
}

/// `POST /oauth/session/start`: the address to send a sign-in code to.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct SessionStartRequest {
    /// The email address of a Mailward account.
    pub email: String,
}

/// A sign-in started: trade the emailed code within 15 minutes.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, PartialEq, Eq)]
pub struct SessionStarted {
    /// The sign-in to complete with `POST /oauth/session`.
    pub signin_id: Uuid,
    /// Seconds the code stays valid.
    pub expires_in_seconds: u32,
}

/// `POST /oauth/session`: the emailed code, and the organization when the account has several.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct SessionRequest {
    /// From `POST /oauth/session/start`.
    pub signin_id: Uuid,
    /// The six-digit code from the email.
    pub code: String,
    /// The organization to open the session in (needed when the account belongs to several).
    #[serde(default)]
    pub organization_id: Option<Uuid>,
}

/// A dashboard session: a Bearer token for the REST API.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, PartialEq, Eq)]
pub struct Session {
    /// Send as `Authorization: Bearer <token>`.
    pub token: String,
    /// `Bearer`.
    pub token_type: String,
    /// Seconds the token lives.
    pub expires_in: i64,
    /// The organization it is scoped to.
    pub organization_id: Uuid,
    /// The person's role there: `admin`, `editor` or `viewer`.
    pub role: String,
}
