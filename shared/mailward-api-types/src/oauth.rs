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
    /// The next refresh token (rotated on every use).
    pub refresh_token: String,
    /// The granted scopes, space separated.
    pub scope: String,
}

