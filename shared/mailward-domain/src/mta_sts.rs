//! Hosted MTA-STS (RFC 8461, SPEC §4.4): the policy Mailward serves at
//! `https://mta-sts.<domain>/.well-known/mta-sts.txt` behind the customer's CNAME, and the
//! `_mta-sts` TXT it serves behind a second CNAME so that the policy `id` changes on every edit
//! without the customer touching DNS.

use serde::{Deserialize, Serialize};
use time::OffsetDateTime;
use uuid::Uuid;

/// Default `max_age` of a hosted policy (one day).
pub const DEFAULT_MAX_AGE: u64 = 86_400;
/// Smallest `max_age` a hosted policy may have (SPEC §8.2).
pub const MIN_MAX_AGE: u64 = 86_400;
/// Largest `max_age` RFC 8461 allows.
pub const MAX_MAX_AGE: u64 = 31_557_600;

/// `mode` of a policy.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum StsMode {
    /// Senders deliver anyway and report failures (the default: start here).
    #[default]
    Testing,
    /// Senders refuse MX hosts without valid TLS.
    Enforce,
    /// The policy is withdrawn: senders forget it.
    None,
}

impl StsMode {
    /// The policy-file word.
    pub fn as_str(self) -> &'static str {
        match self {
            StsMode::Testing => "testing",
            StsMode::Enforce => "enforce",
            StsMode::None => "none",
        }
    }
}

/// A domain's hosted policy.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HostedMtaSts {
    /// `mode`.
    pub mode: StsMode,
    /// `max_age` in seconds.
    pub max_age: u64,
    /// The `mx:` patterns: the domain's live MX hosts when the policy was last built.
    pub mx: Vec<String>,
    /// The policy `id` of the `_mta-sts` TXT record; a new one on every change.
    pub policy_id: String,
    /// How many times the policy changed (part of the id, so an edit back to an earlier
    /// policy still gets a new id).
    pub revision: u32,
    /// When hosting was turned on.
    #[serde(with = "time::serde::rfc3339")]
    pub enabled_at: OffsetDateTime,
    /// When the policy last changed.
    #[serde(with = "time::serde::rfc3339")]
    pub updated_at: OffsetDateTime,
    /// After hosting was turned off: the policy is served as `none` until then (RFC 8461
    /// §8.3: senders that cached the old policy must see it withdrawn), then removed.
    #[serde(default, with = "time::serde::rfc3339::option")]
    pub retiring_until: Option<OffsetDateTime>,
    /// The HTTPS front serving `mta-sts.<domain>` (certificate and distribution), once
    /// requested.
    #[serde(default)]
    pub front: Option<crate::policy_fronts::PolicyFront>,
    /// Fronts being taken down (after a retry or when hosting ends); the reconciliation
    /// closes them until nothing is left.
    #[serde(default)]
    pub closing_fronts: Vec<crate::policy_fronts::PolicyFront>,
}

/// The served copy of a policy, found by the policy host name alone (the serving route knows
/// no organization): one domain name is served for one organization.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServedPolicy {
    /// The organization hosting it.
    pub org_id: Uuid,
    /// Its domain.
    pub domain_id: Uuid,
    /// The policy file (CRLF lines).
    pub policy: String,
}
