//! Wire types: the JSON the API sends, exactly as SPEC.md shapes it, with OpenAPI schemas.
//! Handlers convert model types into these; model types are never serialized to clients.

use mailward_domain::model::{self, ApiKeyAccess, EmailNotifications, PricingType};
use serde::{Deserialize, Serialize};
use time::OffsetDateTime;
use utoipa::ToSchema;
use uuid::Uuid;

/// Error body of every 4xx and 5xx except 429 (SPEC §7.2).
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct ErrorBody {
    /// Lowercase code to branch on.
    pub code: String,
    /// For a person.
    pub message: String,
    /// The offending field.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub param: Option<String>,
    /// Extra data: `documentation` and `openapi` links on 401/404, `request_id` on 5xx.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub details: Option<serde_json::Value>,
}

/// 429 body (SPEC §7.6).
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct RateLimitBody {
    /// Always `rate_limit_exceeded`.
    pub error: String,
    /// The bucket that is exhausted: global, dns, api_key, api_key_dns or signup.
    pub scope: String,
    /// For a person.
    pub message: String,
    /// Requests allowed per window.
    pub limit: u32,
    /// Window length.
    pub window_seconds: u32,
    /// Seconds until the bucket refills.
    pub retry_after_seconds: u32,
}

/// Pagination state of a list (SPEC §4 common rules).
#[derive(Debug, Serialize, Deserialize, ToSchema, PartialEq, Eq)]
pub struct PageInfo {
    /// Matches across all pages.
    pub total_count: u64,
    /// This page, 1-based.
    pub page: u32,
    /// Page size used.
    pub per_page: u32,
    /// Whether a later page exists.
    pub has_more: bool,
}

/// `GET /health-check` body.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct Health {
    /// Always `ok` when the service answers.
    pub status: String,
}

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
        }
    }
}

/// Organization settings.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct OrganizationSettings {
    /// Which notification emails members receive.
    pub email_notifications: EmailNotificationsView,
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
    /// Set when the invitation requested at creation failed; its `code` is `upstream_failure`.
    /// Always null until invitations ship.
    pub invitation_failure: Option<serde_json::Value>,
    #[serde(with = "time::serde::rfc3339")]
    pub created_at: OffsetDateTime,
    #[serde(with = "time::serde::rfc3339")]
    pub updated_at: OffsetDateTime,
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
            },
            onboarding_dismissed_at: o.onboarding_dismissed_at,
            invitation_failure: None,
            created_at: o.created_at,
            updated_at: o.updated_at,
        }
    }
}

/// API key access level.
#[derive(Debug, Serialize, Deserialize, ToSchema, Clone, Copy, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum ApiKeyAccessView {
    /// Reads and writes.
    #[default]
    ReadWrite,
    /// Reads only; writes answer 403.
    ReadOnly,
}

impl From<ApiKeyAccess> for ApiKeyAccessView {
    fn from(a: ApiKeyAccess) -> Self {
        match a {
            ApiKeyAccess::ReadWrite => Self::ReadWrite,
            ApiKeyAccess::ReadOnly => Self::ReadOnly,
        }
    }
}

impl From<ApiKeyAccessView> for ApiKeyAccess {
    fn from(a: ApiKeyAccessView) -> Self {
        match a {
            ApiKeyAccessView::ReadWrite => Self::ReadWrite,
            ApiKeyAccessView::ReadOnly => Self::ReadOnly,
        }
    }
}

/// An API key as listed: never the key itself.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct ApiKey {
    pub id: Uuid,
    pub name: String,
    pub access: ApiKeyAccessView,
    /// Last four characters of the key, to tell keys apart.
    pub last_four: String,
    /// The account that created it; null for the key made by headless signup.
    pub created_by: Option<Uuid>,
    #[serde(with = "time::serde::rfc3339")]
    pub created_at: OffsetDateTime,
    #[serde(with = "time::serde::rfc3339::option")]
    pub rotated_at: Option<OffsetDateTime>,
}

impl From<&model::ApiKey> for ApiKey {
    fn from(k: &model::ApiKey) -> Self {
        Self {
            id: k.id,
            name: k.name.clone(),
            access: k.access.into(),
            last_four: k.last_four.clone(),
            created_by: k.created_by,
            created_at: k.created_at,
            rotated_at: k.rotated_at,
        }
    }
}

/// An API key together with its secret value, returned exactly once (creation, rotation,
/// signup).
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct ApiKeyWithSecret {
    #[serde(flatten)]
    pub api_key: ApiKey,
    /// The key. Send it as the HTTP Basic user name with an empty password. Shown only now.
    pub key: String,
}

/// A page of API keys.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct ApiKeyList {
    pub data: Vec<ApiKey>,
    pub page_info: PageInfo,
}

/// `POST /signup` response.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct SignupStarted {
    /// Pass it to `POST /signup/verify` with the emailed code.
    pub signup_id: Uuid,
    /// Always 900.
    pub expires_in_seconds: u32,
}

/// `POST /signup/verify` and `POST /organizations` (with an API key) response.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct OrganizationWithKey {
    /// The created organization.
    pub organization: Organization,
    /// An organization-scoped API key, shown exactly once.
    pub api_key: ApiKeyWithSecret,
}

/// Webhook endpoint status.
#[derive(Debug, Serialize, Deserialize, ToSchema, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum WebhookStatusView {
    Enabled,
    Disabled,
    AutoDisabled,
}

impl From<crate::repo::webhooks::EndpointStatus> for WebhookStatusView {
    fn from(s: crate::repo::webhooks::EndpointStatus) -> Self {
        use crate::repo::webhooks::EndpointStatus as S;
        match s {
            S::Enabled => Self::Enabled,
            S::Disabled => Self::Disabled,
            S::AutoDisabled => Self::AutoDisabled,
        }
    }
}

/// A webhook endpoint (SPEC §2.12). The signing secret itself appears only in
/// [`WebhookEndpointWithSecret`].
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct WebhookEndpoint {
    pub id: Uuid,
    /// HTTPS URL receiving the POSTs.
    pub url: String,
    pub description: Option<String>,
    /// Subscribed event types; empty means every event, including future ones.
    pub enabled_events: Vec<String>,
    pub status: WebhookStatusView,
    /// Last four characters of the signing secret.
    pub secret_last_four: String,
    /// Payload version pinned at creation.
    pub api_version: String,
    #[serde(with = "time::serde::rfc3339")]
    pub created_at: OffsetDateTime,
    #[serde(with = "time::serde::rfc3339")]
    pub updated_at: OffsetDateTime,
}

impl From<&crate::repo::webhooks::WebhookEndpoint> for WebhookEndpoint {
    fn from(e: &crate::repo::webhooks::WebhookEndpoint) -> Self {
        Self {
            id: e.id,
            url: e.url.clone(),
            description: e.description.clone(),
            enabled_events: e.enabled_events.clone(),
            status: e.status.into(),
            secret_last_four: e.secret_last_four.clone(),
            api_version: e.api_version.clone(),
            created_at: e.created_at,
            updated_at: e.updated_at,
        }
    }
}

/// An endpoint with its full signing secret: returned only by creation and rotation.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct WebhookEndpointWithSecret {
    #[serde(flatten)]
    pub endpoint: WebhookEndpoint,
    /// The signing secret. Shown only now; verify `Mailward-Signature` with it.
    pub secret: String,
}

/// A page of endpoints.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct WebhookEndpointList {
    pub data: Vec<WebhookEndpoint>,
    pub page_info: PageInfo,
}

/// One delivery attempt (kept 30 days, readable after the endpoint is deleted).
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct WebhookDelivery {
    pub id: Uuid,
    pub endpoint_id: Uuid,
    /// The event's id (stable across retries).
    pub event_id: String,
    pub event_type: String,
    /// 1 for the first attempt of the event.
    pub attempt: u32,
    /// `succeeded` (2xx) or `failed`.
    pub status: String,
    /// The receiver's HTTP status; null when no response arrived.
    pub response_status: Option<u16>,
    /// Why it failed (timeout, connection error, HTTP status, refused address); null on success.
    pub error: Option<String>,
    pub duration_ms: u64,
    pub url: String,
    /// When the next attempt is due; null when none is scheduled.
    #[serde(with = "time::serde::rfc3339::option")]
    pub next_retry_at: Option<OffsetDateTime>,
    #[serde(with = "time::serde::rfc3339")]
    pub created_at: OffsetDateTime,
}

impl From<&crate::repo::webhooks::DeliveryAttempt> for WebhookDelivery {
    fn from(a: &crate::repo::webhooks::DeliveryAttempt) -> Self {
        Self {
            id: a.id,
            endpoint_id: a.endpoint_id,
            event_id: a.event_id.clone(),
            event_type: a.event_type.clone(),
            attempt: a.attempt,
            status: match a.status {
                crate::repo::webhooks::AttemptStatus::Succeeded => "succeeded".into(),
                crate::repo::webhooks::AttemptStatus::Failed => "failed".into(),
            },
            response_status: a.response_status,
            error: a.error.clone(),
            duration_ms: a.duration_ms,
            url: a.url.clone(),
            next_retry_at: a.next_retry_at,
            created_at: a.created_at,
        }
    }
}

/// A page of delivery attempts, newest first.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct WebhookDeliveryList {
    pub data: Vec<WebhookDelivery>,
    pub page_info: PageInfo,
}

/// One entry of the event catalogue.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct WebhookEventType {
    /// Event name.
    #[serde(rename = "type")]
    pub event_type: String,
    /// When it fires.
    pub description: String,
    /// The resource kind in `data.object`.
    pub object: String,
}

/// The event catalogue.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct WebhookEventList {
    pub data: Vec<WebhookEventType>,
}
