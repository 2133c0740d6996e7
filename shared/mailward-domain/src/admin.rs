//! Organization administration as stored: groups of domains, invitations, the activity log and
//! support tickets (SPEC §2.4, §2.12, §2.13, §4.2, §4.5).

use crate::model::Role;
use serde::{Deserialize, Serialize};
use time::OffsetDateTime;
use uuid::Uuid;

/// A group of domains (SPEC §2.4), e.g. one customer of a managed-service provider.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Group {
    pub id: Uuid,
    pub org_id: Uuid,
    pub name: String,
    pub external_customer_id: Option<String>,
    pub external_billing_entity_id: Option<String>,
    #[serde(with = "time::serde::rfc3339")]
    pub created_at: OffsetDateTime,
    #[serde(with = "time::serde::rfc3339")]
    pub updated_at: OffsetDateTime,
}

/// An invitation to join an organization.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Invitation {
    pub id: Uuid,
    pub org_id: Uuid,
    /// The invitee's address (normalised).
    pub email: String,
    pub roles: Vec<Role>,
    /// Groups the invitee will be limited to (empty: none).
    pub groups: Vec<Uuid>,
    /// SHA-256 of the single-use acceptance token (the token itself is only in the email).
    pub token_hash: String,
    /// Who invited.
    pub invited_by: Option<Uuid>,
    /// How long each link lives, in seconds (a resend renews the expiry by as much).
    pub ttl_secs: i64,
    #[serde(with = "time::serde::rfc3339")]
    pub expires_at: OffsetDateTime,
    /// When the email was last sent; none when sending failed.
    #[serde(with = "time::serde::rfc3339::option")]
    pub sent_at: Option<OffsetDateTime>,
    #[serde(with = "time::serde::rfc3339")]
    pub created_at: OffsetDateTime,
}

/// Invitations last 14 days unless asked otherwise (SPEC §8.2 `ttl_sec`).
pub const INVITATION_TTL_DEFAULT_SECS: i64 = 1_209_600;
/// Shortest invitation lifetime: one day.
pub const INVITATION_TTL_MIN_SECS: i64 = 86_400;
/// Longest invitation lifetime: thirty days.
pub const INVITATION_TTL_MAX_SECS: i64 = 2_592_000;

/// Who made a change (SPEC §2.13 activity log actor types).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ActorType {
    /// A signed-in person.
    User,
    /// An API key.
    ApiKey,
    /// Mailward's staff (support replies).
    ServiceStaff,
    /// The service itself (monitoring sweep, task checks, jobs).
    System,
}

impl ActorType {
    /// The wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            ActorType::User => "USER",
            ActorType::ApiKey => "API_KEY",
            ActorType::ServiceStaff => "SERVICE_STAFF",
            ActorType::System => "SYSTEM",
        }
    }
}

/// One entry of the activity log: who did what to which target, when.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ActivityEntry {
    pub id: Uuid,
    pub org_id: Uuid,
    pub actor_type: ActorType,
    /// The account, API key or staff id; none for the system.
    pub actor_id: Option<Uuid>,
    /// One of [`ACTIONS`].
    pub action: String,
    /// The kind of target (domain, task, group ...).
    pub target_type: String,
    /// The target's id, when it has one.
    pub target_id: Option<Uuid>,
    /// One line for a person: what changed.
    pub summary: String,
    /// The changed fields' previous values, when the change had any.
    #[serde(default)]
    pub previous: Option<serde_json::Value>,
    #[serde(with = "time::serde::rfc3339")]
    pub created_at: OffsetDateTime,
}

/// Every action the activity log records, with what it means.
pub const ACTIONS: &[(&str, &str)] = &[
    ("organization.created", "An organization was created."),
    (
        "organization.updated",
        "Organization details or settings changed.",
    ),
    (
        "organization.deletion_requested",
        "The organization's deletion was requested.",
    ),
    (
        "organization.onboarding_dismissed",
        "Onboarding was dismissed.",
    ),
    (
        "organization.export_requested",
        "An export of every resource of the organization was requested.",
    ),
    (
        "organization.suspended",
        "Mailward staff suspended the organization (read-only, not swept, billed or mailed).",
    ),
    (
        "organization.suspension_lifted",
        "Mailward staff lifted the organization's suspension.",
    ),
    ("api_key.created", "An API key was created."),
    ("api_key.rotated", "An API key's secret was replaced."),
    ("api_key.deleted", "An API key was deleted."),
    (
        "webhook_endpoint.created",
        "A webhook endpoint was registered.",
    ),
    ("webhook_endpoint.updated", "A webhook endpoint changed."),
    (
        "webhook_endpoint.secret_rotated",
        "A webhook endpoint's signing secret was replaced.",
    ),
    (
        "webhook_endpoint.deleted",
        "A webhook endpoint was deleted.",
    ),
    (
        "webhook_endpoint.auto_disabled",
        "The service disabled a webhook endpoint after repeated failed deliveries.",
    ),
    ("domain.created", "A domain was added."),
    ("domain.updated", "A domain's settings changed."),
    ("domain.deleted", "A domain was removed."),
    (
        "domain.verified",
        "A verification confirmed records of a domain.",
    ),
    (
        "domain.monitoring_changed",
        "The monitoring sweep moved a domain's monitoring status.",
    ),
    (
        "mta_sts.enabled",
        "Hosted MTA-STS was turned on for a domain.",
    ),
    (
        "mta_sts.updated",
        "A domain's hosted MTA-STS policy changed (mode, max_age or its MX hosts).",
    ),
    (
        "mta_sts.disabled",
        "Hosted MTA-STS was turned off; the policy is retired as mode none.",
    ),
    (
        "mta_sts.retried",
        "A new certificate was requested for a domain's MTA-STS policy host after a failed setup.",
    ),
    (
        "dns_connection.created",
        "A DNS host was connected (its credentials are stored encrypted).",
    ),
    ("dns_connection.deleted", "A DNS connection was removed."),
    (
        "mailbox_connection.created",
        "A report mailbox was connected.",
    ),
    (
        "mailbox_connection.updated",
        "A report mailbox connection's settings or credentials changed.",
    ),
    (
        "mailbox_connection.deleted",
        "A report mailbox connection was removed (its credentials with it).",
    ),
    ("alert_rule.created", "An alert rule was made (extension)."),
    (
        "alert_rule.updated",
        "An alert rule's name, scope, condition, destinations or interval changed.",
    ),
    (
        "alert_rule.deleted",
        "An alert rule was deleted (its open alerts resolved first).",
    ),
    (
        "alert.opened",
        "An alert rule's condition started holding for a domain (by the service).",
    ),
    (
        "alert.resolved",
        "An alert stopped holding, or its rule changed or went away (by the service).",
    ),
    (
        "report_settings.created",
        "A scheduled report was set up for the organization or a group (extension).",
    ),
    (
        "report_settings.updated",
        "A scheduled report's cadence, recipients, branding or state changed.",
    ),
    ("report_settings.deleted", "A scheduled report was removed."),
    (
        "report.sent",
        "A scheduled report was mailed to its recipients (by the service).",
    ),
    ("task.updated", "A person changed a task's status."),
    (
        "domain_source.updated",
        "A person confirmed, discarded or reset a sender of a domain.",
    ),
    (
        "domain.spam_rate_supplied",
        "A person supplied (or cleared) a mailbox provider's spam rate for a domain.",
    ),
    ("task.opened", "The service opened a task."),
    (
        "task.reopened",
        "The service reopened a task whose problem returned.",
    ),
    ("task.resolved", "The service found a task's problem gone."),
    (
        "task.canceled",
        "The service closed a task that no longer applies.",
    ),
    ("group.created", "A group was created."),
    ("group.updated", "A group changed."),
    (
        "group.deleted",
        "A group was deleted; its domains are ungrouped.",
    ),
    ("member.added", "A member was added."),
    ("member.updated", "A member's roles or groups changed."),
    ("member.removed", "A member was removed."),
    ("invitation.created", "An invitation was issued."),
    ("invitation.resent", "An invitation was sent again."),
    ("invitation.revoked", "An invitation was withdrawn."),
    ("invitation.accepted", "An invitation was accepted."),
    (
        "source.created",
        "The organization defined a sending source of its own.",
    ),
    (
        "source.updated",
        "One of the organization's own sending sources was changed.",
    ),
    (
        "source.deleted",
        "One of the organization's own sending sources was removed.",
    ),
    ("support.ticket_opened", "A support ticket was opened."),
    ("support.replied", "A reply was added to a support ticket."),
    ("support.read", "Support replies were marked read."),
];

/// A support ticket.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Ticket {
    pub id: Uuid,
    pub org_id: Uuid,
    pub subject: String,
    /// open or closed.
    pub status: String,
    /// Who opened it.
    pub opened_by: Option<Uuid>,
    #[serde(with = "time::serde::rfc3339")]
    pub created_at: OffsetDateTime,
    #[serde(with = "time::serde::rfc3339")]
    pub updated_at: OffsetDateTime,
}

/// One message of a ticket.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TicketMessage {
    pub id: Uuid,
    pub ticket_id: Uuid,
    /// USER or API_KEY for the organization's side, SERVICE_STAFF for support's.
    pub author_type: ActorType,
    pub author_id: Option<Uuid>,
    pub body: String,
    /// Object keys of uploaded attachments.
    #[serde(default)]
    pub attachments: Vec<String>,
    /// When the organization read a staff message (none: unread; always set on its own).
    #[serde(default, with = "time::serde::rfc3339::option")]
    pub read_at: Option<OffsetDateTime>,
    #[serde(with = "time::serde::rfc3339")]
    pub created_at: OffsetDateTime,
}

/// An organization export: every resource as JSON and the report data as CSV in one archive,
/// built in the background for an administrator.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OrgExport {
    pub id: Uuid,
    pub org_id: Uuid,
    /// pending, ready or failed.
    pub status: String,
    /// The administrator who asked (the archive holds what they may read).
    pub requested_by: Uuid,
    /// The archive's object key, once built.
    pub object_key: Option<String>,
    /// The archive's size in bytes, once built.
    pub size_bytes: Option<u64>,
    /// Why it failed.
    pub error: Option<String>,
    #[serde(with = "time::serde::rfc3339")]
    pub created_at: OffsetDateTime,
    #[serde(with = "time::serde::rfc3339::option")]
    pub completed_at: Option<OffsetDateTime>,
}
