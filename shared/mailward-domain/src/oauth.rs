//! The records of the OAuth 2.1 authorization server that signs people in for MCP clients
//! (SPEC §5 rules 6-10): sign-in challenges, authorization codes, connections (one per consent,
//! the family of its refresh tokens), refresh-token lookups and the access-token signing keys.
//! Secrets (codes, refresh tokens, the emailed one-time code) are stored only as hashes.

use crate::model::Role;
use serde::{Deserialize, Serialize};
use time::OffsetDateTime;
use uuid::Uuid;

/// The authorization request as the client sent it, after validation; it rides through the
/// sign-in pages signed, and ends up in the authorization code.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AuthorizationRequest {
    /// The connector client id.
    pub client_id: String,
    /// Where the code goes (checked against the allowed redirect URIs).
    pub redirect_uri: String,
    /// The client's opaque state, returned unchanged.
    pub state: Option<String>,
    /// The PKCE S256 challenge.
    pub code_challenge: String,
    /// The scopes asked for (space separated on the wire).
    pub scopes: Vec<String>,
    /// The resource (RFC 8707) the token is for: the MCP endpoint.
    pub resource: String,
}

/// A pending email sign-in: the one-time code sent to `email` (hashed).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SignInChallenge {
    pub id: Uuid,
    /// The normalised address the code went to.
    pub email: String,
    /// HMAC of the code.
    pub code_hash: String,
    /// Wrong codes so far (5 end the challenge), emailed or second-factor.
    pub failed_attempts: u32,
    /// The emailed code was right and the account's second factor is awaited.
    #[serde(default)]
    pub verified: bool,
    /// A single sign-on finished for this challenge (`GET /oauth/sso/callback`): the next
    /// `POST /oauth/session` with the challenge opens the session.
    #[serde(default)]
    pub sso: Option<crate::identity::SsoResult>,
    #[serde(with = "time::serde::rfc3339")]
    pub expires_at: OffsetDateTime,
}

/// An issued authorization code (stored under its hash, single use).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AuthorizationCode {
    pub request: AuthorizationRequest,
    pub account_id: Uuid,
    /// None: a hosted connector with only `offline_access` that chose no organization.
    pub org_id: Option<Uuid>,
    pub role: Role,
    /// Set once the code was exchanged: a second exchange revokes this connection.
    pub connection_id: Option<Uuid>,
    /// RFC 8176 methods of the sign-in that consented.
    #[serde(default)]
    pub amr: Vec<String>,
    #[serde(with = "time::serde::rfc3339")]
    pub expires_at: OffsetDateTime,
}

/// One consent of a person to a client: the family of its refresh tokens. Deleting it revokes
/// every token of the family at once.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Connection {
    pub id: Uuid,
    pub account_id: Uuid,
    /// None: see [`AuthorizationCode::org_id`].
    pub org_id: Option<Uuid>,
    pub role: Role,
    pub client_id: String,
    pub scopes: Vec<String>,
    pub resource: String,
    /// Hash of the refresh token currently valid; older ones of the family are reuse.
    pub refresh_hash: String,
    /// RFC 8176 methods of the sign-in that consented: with `mfa`, the connection satisfies
    /// an organization that requires MFA.
    #[serde(default)]
    pub amr: Vec<String>,
    #[serde(with = "time::serde::rfc3339")]
    pub created_at: OffsetDateTime,
    #[serde(with = "time::serde::rfc3339")]
    pub last_used_at: OffsetDateTime,
}

/// The lookup of a refresh token's hash: which connection (family) it belongs to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RefreshLookup {
    pub account_id: Uuid,
    pub connection_id: Uuid,
}

/// An access-token signing key (ES256). The private half is sealed with the server secret.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SigningKey {
    /// Key id (`kid`).
    pub kid: String,
    /// The sealed PKCS#8 private key.
    pub sealed_pkcs8: String,
    /// The public point's coordinates, base64url (the JWK `x` and `y`).
    pub x: String,
    pub y: String,
    #[serde(with = "time::serde::rfc3339")]
    pub created_at: OffsetDateTime,
    /// When a newer key took over signing; the key still verifies until tokens signed with it
    /// expired, then it leaves the JWKS.
    #[serde(default, with = "time::serde::rfc3339::option")]
    pub retired_at: Option<OffsetDateTime>,
}
