//! The payload of every background job, with its name on the queue ([`Job`]): what an
//! operation sends ([`crate::job::enqueue`]) without linking the code that runs it, which lives
//! in `mailward-workers`.

use crate::job::Job;
use crate::state::AppState;
use mailward_domain::notifications::Switch;
use mailward_domain::queue::QueueName;
use mailward_tasks::TaskStatus;
use serde::{Deserialize, Serialize};
use time::OffsetDateTime;
use uuid::Uuid;

// The monitoring sweep: a batch of domains to evaluate.

/// Job name of a sweep batch.
pub const SWEEP_BATCH: &str = "sweep_batch";

/// Payload of [`SWEEP_BATCH`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SweepBatch {
    /// `(organization, domain)` pairs.
    pub domains: Vec<(Uuid, Uuid)>,
}

impl Job for SweepBatch {
    const NAME: &'static str = SWEEP_BATCH;
}

// The hourly reconciliation of hosted records: a batch of domains.

/// Job name of a batch.
pub const RECONCILE_BATCH: &str = "reconcile_batch";

/// Payload of [`RECONCILE_BATCH`].
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ReconcileBatch {
    /// `(organization, domain)` pairs.
    pub domains: Vec<(Uuid, Uuid)>,
}

impl Job for ReconcileBatch {
    const NAME: &'static str = RECONCILE_BATCH;
}

// Sender identification: a domain's report rows to read.

/// Job name: identify a domain's senders from its report rows.
pub const IDENTIFY_SENDERS: &str = "identify_senders";

/// Payload of [`IDENTIFY_SENDERS`].
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct IdentifySenders {
    pub org_id: Uuid,
    pub domain_id: Uuid,
}

impl Job for IdentifySenders {
    const NAME: &'static str = IDENTIFY_SENDERS;
}

// Reports that arrived over HTTPS: imported by the workers, as mail is.

/// Job name: import an uploaded report kept in object storage.
pub const INGEST_UPLOAD: &str = "ingest_upload";

/// Payload of [`INGEST_UPLOAD`]: the object holding the upload, and the report address it
/// stands for (`rua+<domain id>@<report domain>`: the path token names the domain as the
/// address does). Uploads are never authenticated.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct IngestUpload {
    pub object_key: String,
    pub recipient: String,
}

impl Job for IngestUpload {
    const NAME: &'static str = INGEST_UPLOAD;
}

// Report mailboxes an organization connected: read on their schedule.

/// Job name: read one mailbox connection's new messages.
pub const POLL_MAILBOX: &str = "poll_mailbox";

/// Payload of [`POLL_MAILBOX`].
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PollMailbox {
    pub org_id: Uuid,
    pub connection_id: Uuid,
}

impl Job for PollMailbox {
    const NAME: &'static str = POLL_MAILBOX;
}

// Task-event stabilisation: a task's status to confirm once it has held.

/// Job name of a stabilisation check.
pub const TASK_EVENT_CHECK: &str = "task_event_check";

/// Payload of [`TASK_EVENT_CHECK`]: the status a task entered and when.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EventCheck {
    pub org_id: Uuid,
    pub task_id: Uuid,
    pub status: TaskStatus,
    #[serde(with = "time::serde::rfc3339")]
    pub since: OffsetDateTime,
}

impl Job for EventCheck {
    const NAME: &'static str = TASK_EVENT_CHECK;
}

// Notification mails: one mail about one domain.

/// Job name: send one notification.
pub const SEND_NOTIFICATION: &str = "send_notification";

/// What happened, which decides the mail's words.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// Monitoring established for the first time (`domain.monitoring.activated`).
    DomainSetup,
    /// Monitoring established again after a drift (`domain.monitoring.recovered`).
    DomainRecovered,
    /// The domain never reached monitoring (`domain.monitoring.failed`).
    DomainFailed,
    /// Monitoring was lost (`domain.monitoring.drifted`).
    DomainDrifted,
    /// The domain's first aggregate report arrived.
    FirstReport,
    /// Hosted DMARC is on but the customer's `_dmarc` CNAME is missing: removed after working
    /// (`drift`) or never published within the window (`setup_timeout`).
    DelegationMissing,
    /// Hosted SPF went live: the domain's record includes the chain Mailward serves
    /// (`domain.hosted_record.ready` with `record` spf).
    HostedSpfLive,
}

impl Kind {
    /// The switch that governs this mail.
    pub fn switch(self) -> Switch {
        match self {
            Kind::DomainSetup | Kind::DomainRecovered => Switch::DomainSetup,
            Kind::DomainFailed => Switch::DomainFailed,
            Kind::DomainDrifted => Switch::DomainDrifted,
            Kind::FirstReport => Switch::FirstReport,
            Kind::DelegationMissing => Switch::DelegationMissing,
            Kind::HostedSpfLive => Switch::HostedSpfLive,
        }
    }
}

/// Payload of [`SEND_NOTIFICATION`].
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Notification {
    /// The organization.
    pub org_id: Uuid,
    /// The domain it is about.
    pub domain_id: Uuid,
    /// What happened.
    pub kind: Kind,
    /// What makes it one occurrence (the event id; `first_report:<domain>`): sent once per
    /// recipient.
    pub occurrence: String,
}

/// Queues one notification.
pub async fn enqueue_notification(
    state: &AppState,
    notification: Notification,
) -> anyhow::Result<()> {
    crate::job::enqueue(state, &notification, 0).await?;
    Ok(())
}

impl Job for Notification {
    const NAME: &'static str = SEND_NOTIFICATION;
}

// The daily task digest of an organization.

/// Job name: send an organization's task digest of one day.
pub const SEND_DIGEST: &str = "send_task_digest";

/// Payload of [`SEND_DIGEST`].
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct DigestJob {
    /// The organization.
    pub org_id: Uuid,
    /// The day (`YYYY-MM-DD`, UTC) the digest is for.
    pub day: String,
}

impl Job for DigestJob {
    const NAME: &'static str = SEND_DIGEST;
}

// The daily reminders of an organization.

/// Job name: send an organization's reminders of one day.
pub const SEND_REMINDERS: &str = "send_reminders";

/// Payload of [`SEND_REMINDERS`].
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RemindersJob {
    /// The organization.
    pub org_id: Uuid,
    /// The day (`YYYY-MM-DD`, UTC) the reminders are for.
    pub day: String,
}

impl Job for RemindersJob {
    const NAME: &'static str = SEND_REMINDERS;
}

// Billing: report an organization's quantities to its subscription.

/// Job name: report the quantities of an organization's subscription.
pub const SYNC_BILLING_QUANTITIES: &str = "sync_billing_quantities";

/// Payload of [`SYNC_BILLING_QUANTITIES`].
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct BillingQuantitiesJob {
    /// The organization.
    pub org_id: Uuid,
}

impl Job for BillingQuantitiesJob {
    const NAME: &'static str = SYNC_BILLING_QUANTITIES;
}

// An organization export, built in the background.

/// Job name: build an organization export's archive.
pub const BUILD_EXPORT: &str = "build_export";

/// Payload of [`BUILD_EXPORT`].
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct BuildExport {
    /// The organization.
    pub org_id: Uuid,
    /// The export.
    pub export_id: Uuid,
}

impl Job for BuildExport {
    const NAME: &'static str = BUILD_EXPORT;
}

// Support mail: a new ticket or a reply, to whoever must hear of it.

/// Job name: mail a support message to whoever must hear of it.
pub const SEND_SUPPORT_MAIL: &str = "send_support_mail";

/// Payload of [`SEND_SUPPORT_MAIL`]: one message of a ticket (a new ticket is its first).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SupportMail {
    /// The organization.
    pub org_id: Uuid,
    /// The ticket.
    pub ticket_id: Uuid,
    /// The message to announce.
    pub message_id: Uuid,
}

impl Job for SupportMail {
    const NAME: &'static str = SEND_SUPPORT_MAIL;
}

// The data lifecycle: what an organization's plan no longer keeps.

/// Job name: remove what an organization's retention no longer keeps.
pub const APPLY_RETENTION: &str = "apply_retention";

/// Payload of [`APPLY_RETENTION`].
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RetentionJob {
    /// The organization.
    pub org_id: Uuid,
}

impl Job for RetentionJob {
    const NAME: &'static str = APPLY_RETENTION;
}

// Webhook delivery: one event to one endpoint.

/// Job name of a delivery.
pub const DELIVER_WEBHOOK: &str = "deliver_webhook";

/// Payload of [`DELIVER_WEBHOOK`]: the exact body to sign and send, stable across retries.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DeliveryJob {
    pub org_id: Uuid,
    pub endpoint_id: Uuid,
    pub event_id: String,
    pub event_type: String,
    /// The serialized envelope: these bytes are signed and POSTed on every attempt.
    pub body: String,
    /// 1-based attempt number.
    pub attempt: u32,
}

impl Job for DeliveryJob {
    const NAME: &'static str = DELIVER_WEBHOOK;
    const QUEUE: QueueName = QueueName::Deliveries;
}

// Alert notification: one alert event to one destination (chat tool, PagerDuty, email).

/// Job name of an alert notification.
pub const DELIVER_ALERT: &str = "deliver_alert";

/// Payload of [`DELIVER_ALERT`]: the alert as the event carried it, so every retry says the
/// same thing, and the destination as the rule had it (its secret sealed).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AlertDeliveryJob {
    pub org_id: Uuid,
    pub alert_id: Uuid,
    /// The outbox event (mail claims its recipients per event).
    pub event_id: String,
    pub action: mailward_domain::alerts::AlertAction,
    pub destination: mailward_domain::alerts::Destination,
    /// The alert's REST shape at the event.
    pub alert: serde_json::Value,
    /// 1-based attempt number.
    pub attempt: u32,
}

impl Job for AlertDeliveryJob {
    const NAME: &'static str = DELIVER_ALERT;
    const QUEUE: QueueName = QueueName::Deliveries;
}

/// Job name: evaluate one alert rule on every domain in its scope (after it is made or changed).
pub const EVALUATE_ALERT_RULE: &str = "evaluate_alert_rule";

/// Payload of [`EVALUATE_ALERT_RULE`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EvaluateAlertRule {
    pub org_id: Uuid,
    pub rule_id: Uuid,
}

impl Job for EvaluateAlertRule {
    const NAME: &'static str = EVALUATE_ALERT_RULE;
}

// The scheduled report.

/// Job name: build and mail one scheduled report.
pub const SEND_SCHEDULED_REPORT: &str = "send_scheduled_report";

/// Payload of [`SEND_SCHEDULED_REPORT`]: `now` for a person's "send now" (sent whatever the
/// schedule says, and the schedule left as it is).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SendScheduledReport {
    pub org_id: Uuid,
    pub settings_id: Uuid,
    pub now: bool,
}

impl Job for SendScheduledReport {
    const NAME: &'static str = SEND_SCHEDULED_REPORT;
}

// The purge of an organization marked `deleting`.

/// Job name: purge an organization marked `deleting`.
pub const DELETE_ORGANIZATION: &str = "delete_organization";

/// The purge of an organization marked `deleting` ([`DELETE_ORGANIZATION`]).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct DeleteOrganization {
    /// The organization to purge.
    pub org_id: Uuid,
    /// The second pass, queued by the first one `Config::purge_final_pass_delay_secs` later
    /// (15 minutes by default): it removes what jobs already running at the first pass wrote,
    /// then the organization record.
    #[serde(default)]
    pub final_pass: bool,
}

impl Job for DeleteOrganization {
    const NAME: &'static str = DELETE_ORGANIZATION;
}
