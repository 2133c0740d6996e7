//! A person's identity beyond the emailed code: the TOTP second factor (RFC 6238) and the
//! dashboard sessions a person holds. Both belong to the account, not to an organization.

use serde::{Deserialize, Serialize};
use time::OffsetDateTime;
use uuid::Uuid;

/// The RFC 8176 `amr` value of the emailed one-time code.
pub const AMR_OTP: &str = "otp";
/// The RFC 8176 `amr` value of a completed second factor.
pub const AMR_MFA: &str = "mfa";
/// The RFC 8176 `amr` value of a sign-in federated from an identity provider.
pub const AMR_FED: &str = "fed";

/// Whether an `amr` list shows a completed second factor.
pub fn amr_has_mfa(amr: &[String]) -> bool {
    amr.iter().any(|m| m == AMR_MFA)
}

/// A person's TOTP authenticator: pending until a first code confirms it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TotpFactor {
    pub account_id: Uuid,
    /// The shared secret (20 random bytes, base32), sealed with the server secret.
    pub sealed_secret: String,
    /// When a first code confirmed it; `None` while enrolment is pending.
    #[serde(default, with = "time::serde::rfc3339::option")]
    pub confirmed_at: Option<OffsetDateTime>,
    /// The last time step whose code was accepted: a code is used once within its step, and
    /// no earlier step is accepted after it.
    #[serde(default)]
    pub last_used_step: u64,
    /// HMACs of the recovery codes not used yet (ten at confirmation, each single use).
    #[serde(default)]
    pub recovery_hashes: Vec<String>,
    #[serde(with = "time::serde::rfc3339")]
    pub created_at: OffsetDateTime,
}

/// A dashboard session: what a sign-in opened, scoped to one organization. Its token carries
/// the id (`sid`); deleting the record ends the session at its next request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DashboardSession {
    pub id: Uuid,
    pub account_id: Uuid,
    pub org_id: Uuid,
    /// RFC 8176 authentication methods: `otp`, then `mfa` once a second factor was used (at
    /// sign-in or later in the session), `fed` for a single sign-on.
    pub amr: Vec<String>,
    /// How the person signed in: `email_code`, or the identity provider's kind.
    #[serde(default = "email_code")]
    pub provider: String,
    /// The browser or client that opened it (`User-Agent`, cut to 200 characters).
    #[serde(default)]
    pub user_agent: Option<String>,
    #[serde(with = "time::serde::rfc3339")]
    pub created_at: OffsetDateTime,
    #[serde(with = "time::serde::rfc3339")]
    pub expires_at: OffsetDateTime,
}

fn email_code() -> String {
    "email_code".into()
}

impl DashboardSession {
    /// Whether the session completed a second factor.
    pub fn mfa(&self) -> bool {
        amr_has_mfa(&self.amr)
    }
}

/// One email domain an organization's single sign-on covers, proven by a TXT record.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SsoDomain {
    /// The normalised domain (`example.com`).
    pub name: String,
    /// When its TXT proof was seen; `None` until then (the domain is not routed to the provider).
    #[serde(default, with = "time::serde::rfc3339::option")]
    pub verified_at: Option<OffsetDateTime>,
}

/// An organization's OpenID Connect provider (one per organization).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SsoConnection {
    pub org_id: Uuid,
    /// The provider's issuer URL (its discovery document is `{issuer}/.well-known/openid-configuration`).
    pub issuer: String,
    pub client_id: String,
    /// The client secret, sealed with the server secret.
    pub sealed_client_secret: String,
    pub domains: Vec<SsoDomain>,
    /// Emailed codes are refused for the verified domains: their people sign in at the provider.
    pub enforced: bool,
    /// Just-in-time membership: a person of a verified domain signing in for the first time joins
    /// with this role; `None`: only existing members sign in.
    #[serde(default)]
    pub jit_role: Option<crate::model::Role>,
    /// Whether the provider's MFA (`amr` containing `mfa`, or one of `mfa_acr_values`) satisfies
    /// the organization's MFA requirement.
    #[serde(default)]
    pub trust_provider_mfa: bool,
    #[serde(default)]
    pub mfa_acr_values: Vec<String>,
    #[serde(with = "time::serde::rfc3339")]
    pub created_at: OffsetDateTime,
    #[serde(with = "time::serde::rfc3339")]
    pub updated_at: OffsetDateTime,
}

/// Where a single sign-on returns: a dashboard sign-in (its challenge), the MCP consent
/// pages (their sealed state), or the web application's sign-in (its challenge; the browser
/// goes back to `/app/sign-in/sso`, which opens the session).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum SsoReturn {
    Session(Uuid),
    Consent(String),
    Web(Uuid),
}

/// One trip to the provider, keyed by its `state`: used once.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SsoAttempt {
    pub state: String,
    pub org_id: Uuid,
    /// The email the person started with (the provider's must be at a verified domain).
    pub email: String,
    pub nonce: String,
    /// The PKCE verifier (S256).
    pub verifier: String,
    pub ret: SsoReturn,
    #[serde(with = "time::serde::rfc3339")]
    pub expires_at: OffsetDateTime,
}

/// What a finished single sign-on proved: the account, and the RFC 8176 methods to record.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SsoResult {
    pub account_id: Uuid,
    /// The organization whose provider signed the person in.
    pub org_id: Uuid,
    pub amr: Vec<String>,
    /// `google`, `microsoft` or `oidc`.
    pub provider: String,
}

/// The member `auth_provider` of an issuer (SPEC §2.13's three values, and `oidc`, SPEC §9.6).
pub fn provider_kind(issuer: &str) -> &'static str {
    let host = issuer
        .trim_start_matches("https://")
        .split('/')
        .next()
        .unwrap_or_default()
        .to_ascii_lowercase();
    match host.as_str() {
        "accounts.google.com" => "google",
        "login.microsoftonline.com" | "sts.windows.net" => "microsoft",
        _ => "oidc",
    }
}
