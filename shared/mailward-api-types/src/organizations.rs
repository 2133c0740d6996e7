//! Organizations (SPEC §2.13, §4.2): the organization as the API shows it and the bodies that
//! create and change one.

use crate::api_keys::ApiKeyWithSecret;
use crate::common::double_option;
use mailward_domain::model::{self, EmailNotifications, PricingType};
use serde::{Deserialize, Serialize};
use time::OffsetDateTime;
use utoipa::ToSchema;
use uuid::Uuid;

/// Per-organization email notification switches.
#[derive(Debug, Serialize, Deserialize, ToSchema, Clone, Copy)]
pub struct EmailNotificationsView {
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
    /// Extension: mail to the addresses of alert rules' email destinations.
    pub alerts: bool,
    /// Extension: the scheduled report's mail (`/report-settings`).
    pub scheduled_reports: bool,
}

impl From<EmailNotifications> for EmailNotificationsView {
    fn from(n: EmailNotifications) -> Self {
        Self {
            domain_drifted: n.domain_drifted,
            domain_failed: n.domain_failed,
            domain_setup: n.domain_setup,
            tasks_digests: n.tasks_digests,
            setup_reminders: n.setup_reminders,
            first_report: n.first_report,
            invitation_reminders: n.invitation_reminders,
            billing_notices: n.billing_notices,
            hosted_spf_live: n.hosted_spf_live,
            delegation_missing: n.delegation_missing,
            alerts: n.alerts,
            scheduled_reports: n.scheduled_reports,
        }
    }
}

/// Organization settings.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct OrganizationSettings {
    /// Which notification emails members receive.
    pub email_notifications: EmailNotificationsView,
    /// Whether the rollout plans of the organization's domains propose next steps
    /// (`upcoming_steps`); a domain's own `agent_proposals_enabled` overrides it.
    pub agent_proposals_enabled: bool,
    /// An extension: whether the local parts of addresses in failure reports are replaced by
    /// `redacted` (RFC 6590) before they are kept (default true). Applies to reports received
    /// from then on.
    pub redact_failure_reports: bool,
}

/// Commercial plan.
#[derive(Debug, Serialize, Deserialize, ToSchema, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum PricingTypeView {
    Free,
    ItTeams,
    Msp,
}

impl From<PricingType> for PricingTypeView {
    fn from(p: PricingType) -> Self {
        match p {
            PricingType::Free => Self::Free,
            PricingType::ItTeams => Self::ItTeams,
            PricingType::Msp => Self::Msp,
        }
    }
}

impl From<PricingTypeView> for PricingType {
    fn from(p: PricingTypeView) -> Self {
        match p {
            PricingTypeView::Free => Self::Free,
            PricingTypeView::ItTeams => Self::ItTeams,
            PricingTypeView::Msp => Self::Msp,
        }
    }
}

/// An organization. SPEC §2.13 names only `require_mfa`, the notification settings, an
/// onboarding-dismissal timestamp and an invitation-failure object; the other fields are
/// Mailward's choice and mirror what `POST /organizations/{id}` accepts.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct Organization {
    pub id: Uuid,
    pub name: String,
    pub is_active: bool,
    pub pricing_type: PricingTypeView,
    pub referer: Option<String>,
    pub logo_url: Option<String>,
    pub email: Option<String>,
    pub phone_number: Option<String>,
    pub website: Option<String>,
    /// Members must complete MFA at sign-in.
    pub require_mfa: bool,
    pub settings: OrganizationSettings,
    /// When onboarding was dismissed (the first dismissal is kept).
    #[serde(with = "time::serde::rfc3339::option")]
    pub onboarding_dismissed_at: Option<OffsetDateTime>,
    /// Set when the invitation requested at creation (`invite_email`) could not be emailed;
    /// its `code` is `upstream_failure`. Null otherwise.
    pub invitation_failure: Option<InvitationFailure>,
    /// The organization this one was created from (`POST /organizations`), if any.
    pub parent_organization_id: Option<Uuid>,
    #[serde(with = "time::serde::rfc3339")]
    pub created_at: OffsetDateTime,
    #[serde(with = "time::serde::rfc3339")]
    pub updated_at: OffsetDateTime,
}

/// Why the invitation requested at organization creation was not delivered.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct InvitationFailure {
    /// `upstream_failure`.
    pub code: String,
    /// For a person: what failed and what to do (the invitation is listed; resend it).
    pub message: String,
}

impl From<&model::Organization> for Organization {
    fn from(o: &model::Organization) -> Self {
        Self {
            id: o.id,
            name: o.name.clone(),
            is_active: o.is_active,
            pricing_type: o.pricing_type.into(),
            referer: o.referer.clone(),
            logo_url: o.logo_url.clone(),
            email: o.email.clone(),
            phone_number: o.phone_number.clone(),
            website: o.website.clone(),
            require_mfa: o.require_mfa,
            settings: OrganizationSettings {
                email_notifications: o.email_notifications.into(),
                agent_proposals_enabled: o.agent_proposals_enabled,
                redact_failure_reports: o.redact_failure_reports,
            },
            onboarding_dismissed_at: o.onboarding_dismissed_at,
            invitation_failure: o.invitation_failure.as_ref().map(|f| InvitationFailure {
                code: f.code.clone(),
                message: f.message.clone(),
            }),
            parent_organization_id: o.parent_org_id,
            created_at: o.created_at,
            updated_at: o.updated_at,
        }
    }
}

/// `POST /signup/verify` and `POST /organizations` (with an API key) response.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct OrganizationWithKey {
    /// The created organization.
    pub organization: Organization,
    /// An organization-scoped API key, shown exactly once.
    pub api_key: ApiKeyWithSecret,
}

/// `POST /organizations` body.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateOrganizationRequest {
    /// 3 to 128 characters without control characters (surrounding spaces are trimmed).
    #[schema(value_type = OrganizationName)]
    pub name: String,
    /// Invites this address as an administrator. Must be omitted or null with an API key.
    /// Invites this address as the new organization's administrator (sessions only: with an
    /// API key it must be omitted or null). An address that already has an account is added
    /// as an administrator directly (`member.added`); otherwise an invitation is emailed, and
    /// when the email fails the organization carries `invitation_failure`.
    #[serde(default, deserialize_with = "double_option")]
    #[schema(value_type = Option<String>, nullable, format = "email")]
    pub invite_email: Option<Option<String>>,
    /// Free-text referer.
    pub referer: Option<String>,
    /// Plan (honoured only where self-serve is enabled; Mailward stores it as given).
    pub pricing_type: Option<PricingTypeView>,
    /// Attribution id.
    pub attribution_id: Option<Uuid>,
}

/// `POST /organizations` response: the organization, plus (for API-key callers only) a
/// read-write key for the new organization, shown once — without it a script could not reach
/// the organization it just created.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct OrganizationCreated {
    #[serde(flatten)]
    pub organization: Organization,
    /// Present only when the caller used an API key.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub api_key: Option<ApiKeyWithSecret>,
}

/// Partial notification settings.
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct EmailNotificationsUpdate {
    pub domain_drifted: Option<bool>,
    pub domain_failed: Option<bool>,
    pub domain_setup: Option<bool>,
    pub tasks_digests: Option<bool>,
    pub setup_reminders: Option<bool>,
    pub first_report: Option<bool>,
    pub invitation_reminders: Option<bool>,
    pub billing_notices: Option<bool>,
    pub hosted_spf_live: Option<bool>,
    pub delegation_missing: Option<bool>,
    /// Extension: mail of alert rules' email destinations.
    pub alerts: Option<bool>,
    /// Extension: the scheduled report's mail.
    pub scheduled_reports: Option<bool>,
}

/// Partial settings.
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SettingsUpdate {
    pub email_notifications: Option<EmailNotificationsUpdate>,
    pub agent_proposals_enabled: Option<bool>,
    /// See `OrganizationSettings::redact_failure_reports`; administrators only.
    pub redact_failure_reports: Option<bool>,
}

/// `POST /organizations/{id}` body: any subset; `null` clears the nullable fields.
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateOrganizationRequest {
    pub is_active: Option<bool>,
    /// 3 to 128 characters without control characters.
    #[schema(value_type = Option<OrganizationName>)]
    pub name: Option<String>,
    /// An absolute http(s) URL, or null.
    #[serde(default, deserialize_with = "double_option")]
    #[schema(value_type = Option<WebUrl>, nullable)]
    pub logo_url: Option<Option<String>>,
    #[serde(default, deserialize_with = "double_option")]
    #[schema(value_type = Option<String>, nullable, format = "email")]
    pub email: Option<Option<String>>,
    /// 4 to 20 digits with optional `+ - ( ) .` and spaces, or null.
    #[serde(default, deserialize_with = "double_option")]
    #[schema(value_type = Option<PhoneNumber>, nullable)]
    pub phone_number: Option<Option<String>>,
    /// An absolute http(s) URL, or null.
    #[serde(default, deserialize_with = "double_option")]
    #[schema(value_type = Option<WebUrl>, nullable)]
    pub website: Option<Option<String>>,
    pub settings: Option<SettingsUpdate>,
    /// Changeable only by an administrator's signed-in session that completed MFA; otherwise
    /// 403 `mfa_confirmation_required`.
    pub require_mfa: Option<bool>,
}

crate::schema_type!(
    /// An organization's name: 3 to 128 characters without control characters, surrounding
    /// spaces trimmed.
    pub OrganizationName = crate::constraints::text(3, 128)
);
crate::schema_type!(
    /// An absolute http or https URL on a host name, at most 2048 characters.
    pub WebUrl = crate::constraints::url("https?", r"[\s\S]", true)
);
crate::schema_type!(
    /// A phone number: 4 to 20 digits with optional `+ - ( ) .` and spaces, at most 32
    /// characters.
    pub PhoneNumber = utoipa::openapi::schema::ObjectBuilder::new()
        .schema_type(utoipa::openapi::schema::Type::String)
        .pattern(Some(r"^\s*[ +().-]*([0-9][ +().-]*){4,20}\s*$"))
        .max_length(Some(32))
);

/// An organization export (an extension beyond SPEC §4.2).
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct OrganizationExport {
    pub id: Uuid,
    /// pending, ready, failed, or expired (7 days after it was built its archive is deleted).
    pub status: String,
    /// The archive's size in bytes, once ready.
    pub size_bytes: Option<u64>,
    /// Where to download the archive (a signed link, valid until `download_expires_at`; read
    /// the export again for a fresh one); null until ready.
    pub download_url: Option<String>,
    #[serde(with = "time::serde::rfc3339::option")]
    #[schema(value_type = Option<String>, format = DateTime)]
    pub download_expires_at: Option<OffsetDateTime>,
    /// Why it failed.
    pub error: Option<String>,
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    pub created_at: OffsetDateTime,
    #[serde(with = "time::serde::rfc3339::option")]
    #[schema(value_type = Option<String>, format = DateTime)]
    pub completed_at: Option<OffsetDateTime>,
}
