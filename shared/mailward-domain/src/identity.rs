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
