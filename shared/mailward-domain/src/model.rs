//! Model types of the platform foundation: organizations, accounts, memberships, API keys and
//! signup challenges. These are the stored shapes (repositories serialize them as JSON items);
//! the wire shapes live in `mailward-api-types`.

use serde::{Deserialize, Serialize};
use time::OffsetDateTime;
use uuid::Uuid;

/// Organization id.
pub type OrgId = Uuid;
/// Account (person) id.
pub type AccountId = Uuid;

/// A member's role in an organization (SPEC §2.12 "Roles").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// Full control, including members, keys and organization settings.
    Admin,
    /// Reads and writes monitoring data.
    Editor,
    /// Reads only.
    Viewer,
}

impl Role {
    /// The wire word.
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Admin => "admin",
            Role::Editor => "editor",
            Role::Viewer => "viewer",
        }
    }

    /// Whether this role may change data.
    pub fn can_write(self) -> bool {
        matches!(self, Role::Admin | Role::Editor)
    }
}

/// An API key's access level. SPEC §5 leaves the names open; Mailward has two.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ApiKeyAccess {
    /// Every organization-scoped read and write an administrator could make through the API
    /// (but never `require_mfa`, which needs a signed-in administrator).
    ReadWrite,
    /// Reads only: every write answers 403.
    ReadOnly,
}

/// Commercial plan chosen at signup or organization creation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PricingType {
    /// Free tier.
    Free,
    /// In-house IT teams.
    ItTeams,
    /// Managed-service providers.
    Msp,
}

/// Per-organization email notification switches (SPEC §2.13).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct EmailNotifications {
    pub domain_drifted: bool,
    pub domain_failed: bool,
    pub domain_setup: bool,
    pub tasks_digests: bool,
    pub setup_reminders: bool,
    pub first_report: bool,
    pub invitation_reminders: bool,
    pub billing_notices: bool,
    pub hosted_spf_live: bool,
    pub delegation_missing: bool,
    /// Alert mail to the addresses of alert rules' email destinations (an extension; stored
    /// organizations from before it read as on).
    #[serde(default = "on")]
    pub alerts: bool,
    /// The scheduled report's mail (an extension; read as on for stored organizations).
    #[serde(default = "on")]
    pub scheduled_reports: bool,
}

fn on() -> bool {
    true
}

impl Default for EmailNotifications {
    fn default() -> Self {
        Self {
            domain_drifted: true,
            domain_failed: true,
            domain_setup: true,
            tasks_digests: true,
            setup_reminders: true,
            first_report: true,
            invitation_reminders: true,
            billing_notices: true,
            hosted_spf_live: true,
            delegation_missing: true,
            alerts: true,
            scheduled_reports: true,
        }
    }
}

/// Lifecycle of an organization. `Deleting` hides it from every credential at once while the
/// asynchronous purge runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OrgState {
    /// Normal.
    Active,
    /// `DELETE /organizations/{id}` accepted; credentials are refused; purge pending.
    Deleting,
}

/// An organization (tenant).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Organization {
    pub id: OrgId,
    pub name: String,
    pub is_active: bool,
    pub state: OrgState,
    pub pricing_type: PricingType,
    pub referer: Option<String>,
    pub attribution_id: Option<Uuid>,
    pub logo_url: Option<String>,
    pub email: Option<String>,
    pub phone_number: Option<String>,
    pub website: Option<String>,
    pub require_mfa: bool,
    pub email_notifications: EmailNotifications,
    /// Whether the rollout plans of the organization's domains propose next steps (a domain
    /// may say otherwise).
    #[serde(default = "yes")]
    pub agent_proposals_enabled: bool,
    /// Whether the local parts of addresses in failure reports are replaced by `redacted`
    /// (RFC 6590) before they are kept; on unless the organization turns it off.
    #[serde(default = "yes")]
    pub redact_failure_reports: bool,
    #[serde(with = "time::serde::rfc3339::option")]
    pub onboarding_dismissed_at: Option<OffsetDateTime>,
    /// The account that created it (signup or `POST /organizations` from a session), if any.
    pub created_by: Option<AccountId>,
    /// The organization it was created from (`POST /organizations`), for a managed-service
    /// provider's usage across its customers.
    #[serde(default)]
    pub parent_org_id: Option<OrgId>,
    /// Set when the invitation asked for at creation could not be sent.
    #[serde(default)]
    pub invitation_failure: Option<InvitationFailure>,
    /// Set while Mailward staff hold the organization suspended (separate from the
    /// customer's own `is_active`, which staff never touch).
    #[serde(default)]
    pub suspension: Option<Suspension>,
    #[serde(with = "time::serde::rfc3339")]
    pub created_at: OffsetDateTime,
    #[serde(with = "time::serde::rfc3339")]
    pub updated_at: OffsetDateTime,
}

/// A staff suspension: the organization is not swept, billed or mailed, and its API answers
/// read-only, until staff lift it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Suspension {
    /// Why, as staff wrote it (shown to the organization in the refusal of a write).
    pub reason: String,
    /// The staff member who suspended it.
    pub by: String,
    #[serde(with = "time::serde::rfc3339")]
    pub at: OffsetDateTime,
}

impl Organization {
    /// Whether the service works for it now: not being deleted, not switched off by the
    /// customer (`is_active: false`), not suspended by staff. The sweep and mail ask this.
    pub fn is_serviced(&self) -> bool {
        self.state == OrgState::Active && self.is_active && self.suspension.is_none()
    }
}

/// Organization names are 3 to 128 characters (SPEC §8.2), counted after trimming.
pub fn validate_org_name(raw: &str) -> Result<String, &'static str> {
    let name = raw.trim();
    let chars = name.chars().count();
    if chars < 3 {
        return Err("must be at least 3 characters");
    }
    if chars > 128 {
        return Err("must be at most 128 characters");
    }
    if name.chars().any(char::is_control) {
        return Err("must not contain control characters");
    }
    Ok(name.to_owned())
}

/// A person's account, keyed globally by normalised email.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Account {
    pub id: AccountId,
    pub email: String,
    #[serde(with = "time::serde::rfc3339")]
    pub created_at: OffsetDateTime,
}

/// An account's membership in an organization.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Membership {
    pub org_id: OrgId,
    pub account_id: AccountId,
    /// The account's email, copied here so the member list needs no lookup per member
    /// (accounts never change their address; empty on memberships stored before the copy).
    #[serde(default)]
    pub email: String,
    pub roles: Vec<Role>,
    /// The groups the member is limited to; empty means every domain of the organization.
    #[serde(default)]
    pub groups: Vec<Uuid>,
    /// When the member last signed in with a second factor (seen on a session), if ever.
    #[serde(default, with = "time::serde::rfc3339::option")]
    pub mfa_seen_at: Option<OffsetDateTime>,
    /// Provisioned by the organization's identity provider over SCIM: its groups come from
    /// there, and no groups means no domain (never "every domain").
    #[serde(default)]
    pub scim_managed: bool,
    #[serde(with = "time::serde::rfc3339")]
    pub created_at: OffsetDateTime,
}

impl Membership {
    /// The strongest role held (admin over editor over viewer).
    pub fn role(&self) -> Role {
        [Role::Admin, Role::Editor, Role::Viewer]
            .into_iter()
            .find(|r| self.roles.contains(r))
            .unwrap_or(Role::Viewer)
    }

    /// The groups the member is limited to, `None` for every domain: a member provisioned over
    /// SCIM without groups is limited to none.
    pub fn group_limit(&self) -> Option<Vec<uuid::Uuid>> {
        (self.scim_managed || !self.groups.is_empty()).then(|| self.groups.clone())
    }

    /// Whether the member administers the organization.
    pub fn is_admin(&self) -> bool {
        self.roles.contains(&Role::Admin)
    }
}

/// Why the invitation requested with an organization's creation was not sent (SPEC §2.13).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct InvitationFailure {
    /// `upstream_failure`.
    pub code: String,
    /// For a person.
    pub message: String,
}

/// An API key's metadata. The key itself is never stored: only its hash, in a separate lookup
/// item keyed by that hash.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ApiKey {
    pub id: Uuid,
    pub org_id: OrgId,
    pub name: String,
    pub access: ApiKeyAccess,
    /// SHA-256 hex of the current key (to delete the lookup item on rotation or deletion).
    pub key_hash: String,
    /// The last four characters of the current key, to help people tell keys apart.
    pub last_four: String,
    pub created_by: Option<AccountId>,
    #[serde(with = "time::serde::rfc3339")]
    pub created_at: OffsetDateTime,
    #[serde(with = "time::serde::rfc3339::option")]
    pub rotated_at: Option<OffsetDateTime>,
}

/// A pending headless signup (SPEC §4.7, §5.5).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SignupChallenge {
    pub id: Uuid,
    pub email: String,
    pub organization_name: String,
    pub pricing_type: PricingType,
    pub attribution_id: Option<Uuid>,
    /// Keyed hash of the emailed code.
    pub code_hash: String,
    pub failed_attempts: u32,
    #[serde(with = "time::serde::rfc3339")]
    pub expires_at: OffsetDateTime,
}

/// Signup codes are valid this long (SPEC §8.2).
pub const SIGNUP_CODE_TTL_SECS: i64 = 900;
/// Incorrect verification attempts that kill a challenge (SPEC §8.2).
pub const SIGNUP_MAX_FAILED_ATTEMPTS: u32 = 5;

fn yes() -> bool {
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn org_names_are_three_to_128_chars_after_trimming() {
        assert!(validate_org_name("ab").is_err());
        assert!(validate_org_name("  ab  ").is_err());
        assert_eq!(validate_org_name(" Acme ").unwrap(), "Acme");
        assert!(validate_org_name(&"é".repeat(128)).is_ok());
        assert!(validate_org_name(&"é".repeat(129)).is_err());
        assert!(validate_org_name("bad\u{0}name").is_err());
    }
}
