//! A person's identity (an extension of SPEC §5): the TOTP second factor and the dashboard
//! sessions they hold.

use serde::{Deserialize, Serialize};
use time::OffsetDateTime;
use utoipa::ToSchema;
use uuid::Uuid;

/// `POST /account/mfa/totp`: a pending authenticator to add to an app.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, PartialEq, Eq)]
pub struct TotpEnrollment {
    /// The shared secret, base32 (for apps where it is typed in).
    pub secret: String,
    /// The `otpauth://totp/…` URI (RFC 6238: SHA-1, 6 digits, 30-second steps).
    pub otpauth_uri: String,
    /// The URI as a QR code, an SVG document.
    pub qr_svg: String,
    /// SHA1.
    pub algorithm: String,
    /// 6.
    pub digits: u32,
    /// 30.
    pub period: u32,
}

/// A code from the authenticator app (six digits) or, where accepted, a recovery code.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct MfaCodeRequest {
    /// Six digits from the app, or a recovery code (`xxxxx-xxxxx`) where the route says so.
    #[schema(min_length = 6, max_length = 64)]
    pub code: String,
}

/// The ten recovery codes, shown once; each works once in place of an app code.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, PartialEq, Eq)]
pub struct RecoveryCodes {
    pub recovery_codes: Vec<String>,
}

/// The signed-in person's second factor.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, PartialEq, Eq)]
pub struct MfaStatus {
    /// Whether a confirmed authenticator app is enrolled.
    pub totp_enabled: bool,
    /// Whether an enrolment was started and awaits its first code.
    pub totp_pending: bool,
    /// When the authenticator was confirmed.
    #[serde(with = "time::serde::rfc3339::option")]
    #[schema(value_type = Option<String>, format = DateTime)]
    pub confirmed_at: Option<OffsetDateTime>,
    /// Recovery codes not used yet.
    pub recovery_codes_remaining: u32,
    /// Whether the current session completed a second factor (`amr` contains `mfa`).
    pub session_mfa: bool,
}

/// One of the person's dashboard sessions.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, PartialEq, Eq)]
pub struct SessionView {
    /// Revoke it with `DELETE /oauth/sessions/{id}`.
    pub id: Uuid,
    /// The organization it is scoped to.
    pub organization_id: Uuid,
    /// RFC 8176 methods: `otp` (emailed code), `mfa` (second factor), `fed` (single sign-on).
    pub amr: Vec<String>,
    /// `email_code`, `google`, `microsoft` or `oidc`.
    pub provider: String,
    /// Whether this is the session making the request.
    pub current: bool,
    /// The client that opened it (its `User-Agent`).
    pub user_agent: Option<String>,
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    pub created_at: OffsetDateTime,
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    pub expires_at: OffsetDateTime,
}

/// The person's live dashboard sessions, newest first.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, PartialEq, Eq)]
pub struct SessionList {
    pub data: Vec<SessionView>,
}

/// `POST /sso`: the organization's OpenID Connect provider (an extension).
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, PartialEq, Eq, Default)]
#[serde(deny_unknown_fields)]
pub struct SsoConnectionRequest {
    /// The issuer URL (https); its discovery document must name the same issuer.
    #[schema(format = "uri", max_length = 512)]
    pub issuer: Option<String>,
    /// 1 to 256 characters without control characters (surrounding spaces trimmed).
    #[schema(value_type = Option<crate::constraints::ClientId>)]
    pub client_id: Option<String>,
    /// Required when the connection is created; stored sealed and never shown again.
    #[schema(min_length = 1, max_length = 1024)]
    pub client_secret: Option<String>,
    /// The email domains it covers (at most 20); each is routed to the provider once its TXT
    /// proof is seen (`POST /sso/verify`).
    #[schema(max_items = 20, value_type = Option<Vec<crate::constraints::HostName>>)]
    pub domains: Option<Vec<String>>,
    /// Refuse emailed codes for the verified domains.
    pub enforced: Option<bool>,
    /// Just-in-time membership: the role of a person of a verified domain who signs in for the
    /// first time; null: only existing members sign in.
    #[serde(default, deserialize_with = "crate::common::double_option")]
    #[schema(value_type = Option<crate::admin::RoleView>)]
    pub jit_role: Option<Option<crate::admin::RoleView>>,
    /// Whether the provider's MFA (`amr` with `mfa`, or an `acr` listed here) satisfies
    /// `require_mfa`.
    pub trust_provider_mfa: Option<bool>,
    #[schema(max_items = 10, value_type = Option<Vec<crate::constraints::AcrValue>>)]
    pub mfa_acr_values: Option<Vec<String>>,
}

/// One email domain of the connection, with the TXT record that proves it.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, PartialEq, Eq)]
pub struct SsoDomainView {
    pub name: String,
    pub verified: bool,
    #[serde(with = "time::serde::rfc3339::option")]
    #[schema(value_type = Option<String>, format = DateTime)]
    pub verified_at: Option<OffsetDateTime>,
    /// Publish a TXT record at this name…
    pub txt_name: String,
    /// …with this value.
    pub txt_value: String,
}

/// The organization's OpenID Connect provider.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, PartialEq, Eq)]
pub struct SsoConnectionView {
    pub issuer: String,
    pub client_id: String,
    /// The last four characters of the client secret.
    pub client_secret_last_four: String,
    /// Register this redirect URI at the provider.
    pub redirect_uri: String,
    /// The member `auth_provider` its sign-ins get: `google`, `microsoft` or `oidc`.
    pub provider: String,
    pub domains: Vec<SsoDomainView>,
    pub enforced: bool,
    pub jit_role: Option<crate::admin::RoleView>,
    pub trust_provider_mfa: bool,
    pub mfa_acr_values: Vec<String>,
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    pub created_at: OffsetDateTime,
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    pub updated_at: OffsetDateTime,
}

/// `POST /scim-tokens`.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct ScimTokenRequest {
    /// A name to tell tokens apart (1 to 100 characters without control characters).
    #[schema(value_type = crate::constraints::Label)]
    pub name: String,
}

/// A SCIM token (an extension): the bearer credential of the organization's identity provider
/// on `/scim/v2`.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, PartialEq, Eq)]
pub struct ScimTokenView {
    pub id: Uuid,
    pub name: String,
    /// The last four characters of the token.
    pub last_four: String,
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    pub created_at: OffsetDateTime,
    /// The token (`mwscim_…`), only in the answer that created it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token: Option<String>,
}

/// The organization's SCIM tokens, newest first.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, PartialEq, Eq)]
pub struct ScimTokenList {
    pub data: Vec<ScimTokenView>,
}

/// A SCIM resource or message (RFC 7643/7644), as the SCIM schemas describe it
/// (`/scim/v2/Schemas`).
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, PartialEq)]
#[schema(value_type = Object)]
pub struct ScimObject(pub serde_json::Value);

/// A SCIM error (RFC 7644 §3.12).
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, PartialEq, Eq)]
pub struct ScimErrorBody {
    /// `urn:ietf:params:scim:api:messages:2.0:Error`.
    pub schemas: Vec<String>,
    /// The HTTP status, as a string.
    pub status: String,
    /// `invalidFilter`, `uniqueness`, `mutability`, `invalidSyntax`, `invalidPath`, `noTarget`
    /// or `invalidValue`, when one applies.
    #[serde(rename = "scimType", default, skip_serializing_if = "Option::is_none")]
    pub scim_type: Option<String>,
    pub detail: String,
}
