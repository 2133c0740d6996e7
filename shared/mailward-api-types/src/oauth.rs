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
    /// The organization the person picked at sign-in; null for a hosted connector that got
    /// only `offline_access` and chose none (its tokens serve the directory endpoint, for the
    /// person's single organization).
    pub organization_id: Option<Uuid>,
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
    #[schema(format = "email", max_length = 254)]
    pub email: String,
}

/// A sign-in started: trade the emailed code within 15 minutes.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, PartialEq, Eq)]
pub struct SessionStarted {
    /// The sign-in to complete with `POST /oauth/session`.
    pub signin_id: Uuid,
    /// Seconds the code stays valid.
    pub expires_in_seconds: u32,
    /// When the address's domain signs in through its organization's identity provider: open
    /// this URL in a browser, then `POST /oauth/session` with the `signin_id` alone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sso_url: Option<String>,
    /// Whether the organization enforces its identity provider for the domain: no code is
    /// mailed, only `sso_url` signs in.
    #[serde(default)]
    pub sso_required: bool,
}

/// `POST /oauth/session`: the emailed code, and the organization when the account has several.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct SessionRequest {
    /// From `POST /oauth/session/start`.
    pub signin_id: Uuid,
    /// The six-digit code from the email. May be left out when the sign-in already passed
    /// its email step and only the second factor remains (the `mfa_required` answer).
    #[serde(default)]
    #[schema(pattern = "^[0-9]{6}$")]
    pub code: Option<String>,
    /// The second factor, when the account has an authenticator: six digits from the app, or
    /// one of its recovery codes (`xxxxx-xxxxx`). Without it such an account gets 403
    /// `mfa_required` and may send it with the same `signin_id`.
    #[serde(default)]
    #[schema(min_length = 6, max_length = 64)]
    pub mfa_code: Option<String>,
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

/// `POST /oauth/token` form (RFC 6749 §4.1.3 and §6, with PKCE): `grant_type=authorization_code`
/// with `code`, `redirect_uri`, `client_id` and `code_verifier`, optionally `resource`; or
/// `grant_type=refresh_token` with `refresh_token` and `client_id`. No client secret. Documents
/// the form; the route reads it itself.
#[derive(Debug, ToSchema)]
pub struct TokenForm {
    /// `authorization_code` or `refresh_token`.
    #[schema(value_type = GrantType)]
    pub grant_type: String,
    /// The connector client id (any other, or none, is `invalid_client`, 401).
    pub client_id: String,
    /// authorization_code: the code the redirect carried.
    pub code: Option<String>,
    /// authorization_code: the redirect URI of the authorization request.
    pub redirect_uri: Option<String>,
    /// authorization_code: the PKCE verifier.
    pub code_verifier: Option<String>,
    /// refresh_token: the refresh token.
    pub refresh_token: Option<String>,
    /// RFC 8707: the resource of the authorization request.
    pub resource: Option<String>,
}

crate::words!(
    /// The grants the token endpoint accepts.
    pub GrantType = ["authorization_code", "refresh_token"]
);

/// `POST /oauth/revoke` form (RFC 7009). Documents the form; the route reads it itself.
#[derive(Debug, ToSchema)]
pub struct RevokeForm {
    /// A refresh or access token.
    #[schema(min_length = 1)]
    pub token: String,
    /// `refresh_token` or `access_token` (a hint only).
    pub token_type_hint: Option<String>,
    /// The connector client id.
    pub client_id: Option<String>,
}

/// `POST /oauth/authorize` form: one step of the sign-in pages. Documents the form; the route
/// reads it itself.
#[derive(Debug, ToSchema)]
pub struct AuthorizeStepForm {
    /// `email`, `code` or `consent`.
    #[schema(value_type = SignInStep)]
    pub step: String,
    /// The signed state of the page (expires after 15 minutes).
    pub state: String,
    /// step email: the address.
    pub email: Option<String>,
    /// step code: the emailed code.
    pub code: Option<String>,
    /// step consent: the organization picked, or `none` (offered only to a hosted connector
    /// asking for `offline_access` alone: its tokens serve the directory endpoint).
    pub organization_id: Option<String>,
    /// step consent: `allow` or `deny`.
    pub decision: Option<String>,
    /// step consent: `yes` grants the write scopes asked for (the page's box, ticked by
    /// default); absent, the token carries the read scopes alone.
    pub allow_changes: Option<String>,
}

crate::words!(
    /// A step of the sign-in pages.
    pub SignInStep = ["email", "code", "consent"]
);
