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
