//! Alert rules and the alerts they raise (an extension beyond SPEC): a rule watches a scope of
//! domains for one typed condition and notifies its destinations (email, Slack, Microsoft Teams,
//! PagerDuty, a webhook endpoint) when an alert opens, again while it stays true (no more often
//! than the rule's repeat interval), and when it resolves.
//!
//! An alert is keyed by `(rule, domain, subject)`: the subject tells apart alerts of one rule
//! on one domain (a sender, a certificate, a hosted record); it is empty for conditions about the
//! domain as a whole. The pure part of evaluation lives here ([`Finding`], [`Transition`],
//! [`diff`]); what a condition reads lives in `mailward-services`.

use crate::domain::ScoreBand;
use serde::{Deserialize, Serialize};
use time::OffsetDateTime;
use uuid::Uuid;

/// Rules one organization may have.
pub const MAX_RULES: usize = 100;
/// Destinations one rule may have.
pub const MAX_DESTINATIONS: usize = 10;
/// Delivery attempts kept on an alert (newest last).
pub const KEPT_DELIVERIES: usize = 50;
/// How long a resolved alert stays listed.
pub const RESOLVED_KEPT_DAYS: i64 = 90;
/// The default repeat interval, in minutes.
pub const DEFAULT_REPEAT_MINUTES: u32 = 240;

/// Which domains a rule watches.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum AlertScope {
    /// Every domain of the organization (the caller's groups' domains, for a rule made by a
    /// member limited to groups: such rules are stored as `groups`).
    All,
    /// The domains of these groups.
    Groups { group_ids: Vec<Uuid> },
    /// These domains.
    Domains { domain_ids: Vec<Uuid> },
}

impl AlertScope {
    /// Whether a domain (in `group`) is in scope.
    pub fn covers(&self, domain: Uuid, group: Option<Uuid>) -> bool {
        match self {
            AlertScope::All => true,
            AlertScope::Groups { group_ids } => group.is_some_and(|g| group_ids.contains(&g)),
            AlertScope::Domains { domain_ids } => domain_ids.contains(&domain),
        }
    }
}

/// Where in the pipeline a condition is evaluated: the place its data is computed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Trigger {
    /// A domain's evaluation by the sweep (monitoring, score, conflicts, mark and MX
    /// certificates).
    Sweep,
    /// Sender identification after reports arrived (DMARC pass rate, senders).
    Reports,
    /// A TLS report was imported.
    TlsReports,
    /// The hourly reconciliation of hosted records (hosted records, MTA-STS certificates).
    Reconcile,
}

/// What a rule watches for, with its parameters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum AlertCondition {
    /// `monitoring_status` is `failed` or `drifted`.
    MonitoringProblem,
    /// The score is in a band below `band` (e.g. `good`: alert when bad or critical).
    ScoreBelow { band: ScoreBand },
    /// The share of messages passing DMARC over the last `window_days` days is under
    /// `threshold_pct`, with at least `min_messages` messages in the window.
    DmarcPassRateBelow {
        threshold_pct: f64,
        window_days: u32,
        min_messages: u64,
    },
    /// A sender first seen in the last `window_days` days, that no catalogue source identifies
    /// and nobody confirmed or discarded, sent at least `min_messages` messages (in the
    /// sender's recent 30-day window).
    NewUnknownSender { min_messages: u64, window_days: u32 },
    /// A confirmed or recognised (and not discarded) sender's messages failed DMARC at over
    /// `threshold_pct` in its recent 30-day window, with at least `min_messages` messages.
    SenderFailureRateAbove {
        threshold_pct: f64,
        min_messages: u64,
    },
    /// TLS reports show over `threshold_pct` failed sessions over `window_days` days, with at
    /// least `min_sessions` sessions.
    TlsFailureRateAbove {
        threshold_pct: f64,
        window_days: u32,
        min_sessions: u64,
    },
    /// A hosted record (DMARC, SPF, DKIM, BIMI, MTA-STS) is in error.
    HostedRecordError,
    /// A certificate (the BIMI mark certificate, the hosted MTA-STS policy host's, an MX host's)
    /// expires within `within_days` days or has expired.
    CertificateExpiring { within_days: u32 },
    /// A DNS conflict was detected.
    DnsConflict,
}

impl AlertCondition {
    /// The wire name.
    pub fn name(&self) -> &'static str {
        match self {
            AlertCondition::MonitoringProblem => "monitoring_problem",
            AlertCondition::ScoreBelow { .. } => "score_below",
            AlertCondition::DmarcPassRateBelow { .. } => "dmarc_pass_rate_below",
            AlertCondition::NewUnknownSender { .. } => "new_unknown_sender",
            AlertCondition::SenderFailureRateAbove { .. } => "sender_failure_rate_above",
            AlertCondition::TlsFailureRateAbove { .. } => "tls_failure_rate_above",
            AlertCondition::HostedRecordError => "hosted_record_error",
            AlertCondition::CertificateExpiring { .. } => "certificate_expiring",
            AlertCondition::DnsConflict => "dns_conflict",
        }
    }

    /// Whether this condition is evaluated at `trigger`.
    pub fn evaluated_at(&self, trigger: Trigger) -> bool {
        match self {
            AlertCondition::MonitoringProblem
            | AlertCondition::ScoreBelow { .. }
            | AlertCondition::DnsConflict => trigger == Trigger::Sweep,
            AlertCondition::DmarcPassRateBelow { .. }
            | AlertCondition::NewUnknownSender { .. }
            | AlertCondition::SenderFailureRateAbove { .. } => trigger == Trigger::Reports,
            AlertCondition::TlsFailureRateAbove { .. } => trigger == Trigger::TlsReports,
            AlertCondition::HostedRecordError => trigger == Trigger::Reconcile,
            // Mark and MX certificates are learned by the sweep, the MTA-STS policy host's by
            // the reconciliation; both look at every certificate (and time passes by itself).
            AlertCondition::CertificateExpiring { .. } => {
                matches!(trigger, Trigger::Sweep | Trigger::Reconcile)
            }
        }
    }

    /// How bad an alert of this condition is.
    pub fn severity(&self) -> Severity {
        match self {
            AlertCondition::MonitoringProblem | AlertCondition::HostedRecordError => {
                Severity::Error
            }
            AlertCondition::DmarcPassRateBelow { .. }
            | AlertCondition::SenderFailureRateAbove { .. }
            | AlertCondition::TlsFailureRateAbove { .. } => Severity::Error,
            AlertCondition::ScoreBelow { .. }
            | AlertCondition::NewUnknownSender { .. }
            | AlertCondition::CertificateExpiring { .. }
            | AlertCondition::DnsConflict => Severity::Warning,
        }
    }
}

/// An alert's severity, in PagerDuty's words.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    /// Needs someone now.
    Critical,
    /// Mail is failing or about to.
    Error,
    /// Worth a look.
    Warning,
    /// For information.
    Info,
}

impl Severity {
    /// The wire word (PagerDuty's `payload.severity`).
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Critical => "critical",
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Info => "info",
        }
    }
}

/// The kind of a destination.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DestinationKind {
    /// Email addresses (governed by the `alerts` notification switch).
    Email,
    /// A Slack incoming webhook (Block Kit with a plain-text fallback).
    Slack,
    /// A Microsoft Teams workflow webhook ("When a Teams webhook request is received"): an
    /// Adaptive Card.
    Teams,
    /// A PagerDuty service's Events API v2 integration (routing key).
    Pagerduty,
    /// One of the organization's webhook endpoints: the signed `alert.*` event.
    WebhookEndpoint,
}

impl DestinationKind {
    /// The wire word.
    pub fn as_str(self) -> &'static str {
        match self {
            DestinationKind::Email => "email",
            DestinationKind::Slack => "slack",
            DestinationKind::Teams => "teams",
            DestinationKind::Pagerduty => "pagerduty",
            DestinationKind::WebhookEndpoint => "webhook_endpoint",
        }
    }

    /// Whether this kind is sent by the alert delivery job (the others go by mail or through
    /// the webhook publisher).
    pub fn is_http(self) -> bool {
        matches!(
            self,
            DestinationKind::Slack | DestinationKind::Teams | DestinationKind::Pagerduty
        )
    }
}

/// One destination of a rule.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Destination {
    /// Its id (stable across updates of the rule that keep it).
    pub id: Uuid,
    /// Its kind.
    pub kind: DestinationKind,
    /// Email: the addresses.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub emails: Vec<String>,
    /// Webhook endpoint: its id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub endpoint_id: Option<Uuid>,
    /// Slack or Teams: the webhook URL; PagerDuty: the routing key. Sealed with the service
    /// key, never answered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sealed_secret: Option<String>,
    /// What may be shown of the secret: the URL's host with its last four characters, or the
    /// routing key's last four.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
}

/// A stored alert rule.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AlertRule {
    pub id: Uuid,
    pub org_id: Uuid,
    /// A person's name for it.
    pub name: String,
    /// Off: evaluated no more; its open alerts resolve at their next evaluation.
    pub enabled: bool,
    pub scope: AlertScope,
    pub condition: AlertCondition,
    pub destinations: Vec<Destination>,
    /// While an alert stays open, its destinations hear again at most this often.
    pub repeat_interval_minutes: u32,
    /// Who made it (member or key id).
    pub created_by: Option<Uuid>,
    #[serde(with = "time::serde::rfc3339")]
    pub created_at: OffsetDateTime,
    #[serde(with = "time::serde::rfc3339")]
    pub updated_at: OffsetDateTime,
}

/// Whether an alert is open.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AlertStatus {
    /// The condition holds.
    Open,
    /// It stopped holding (or the rule, the domain or its scope went away).
    Resolved,
}

/// What a notification says happened.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AlertAction {
    /// The alert opened.
    Opened,
    /// It is still open (a repeat, after the rule's interval).
    Updated,
    /// It resolved.
    Resolved,
    /// A sample sent by `POST /alert-rules/{id}/test`.
    Test,
}

impl AlertAction {
    /// The wire word.
    pub fn as_str(self) -> &'static str {
        match self {
            AlertAction::Opened => "opened",
            AlertAction::Updated => "updated",
            AlertAction::Resolved => "resolved",
            AlertAction::Test => "test",
        }
    }
}

/// Where an alert event goes besides the endpoints subscribed to it: the rule's destinations
/// as they were when the event committed (a rule deleted meanwhile still resolves its alerts
/// where they were opened). Carried by the outbox event, never sent to a receiver.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AlertRoute {
    pub rule_id: Uuid,
    pub alert_id: Uuid,
    pub action: AlertAction,
    pub destinations: Vec<Destination>,
}

/// One attempt at notifying one destination.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AlertDelivery {
    pub destination_id: Uuid,
    pub kind: DestinationKind,
    pub action: AlertAction,
    pub attempt: u32,
    /// `succeeded` or `failed`.
    pub succeeded: bool,
    pub response_status: Option<u16>,
    pub error: Option<String>,
    #[serde(with = "time::serde::rfc3339")]
    pub at: OffsetDateTime,
    #[serde(default, with = "time::serde::rfc3339::option")]
    pub next_retry_at: Option<OffsetDateTime>,
}

/// One alert: a rule's condition holding for one domain (and subject).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Alert {
    pub id: Uuid,
    pub org_id: Uuid,
    pub rule_id: Uuid,
    /// The rule's name when the alert last changed.
    pub rule_name: String,
    /// The condition's wire name.
    pub condition: String,
    pub domain_id: Uuid,
    pub domain: String,
    /// The group of the domain when the alert opened (members limited to groups see alerts of
    /// their groups' domains).
    pub group_id: Option<Uuid>,
    /// What in the domain the alert is about (empty: the domain as a whole).
    pub subject: String,
    pub status: AlertStatus,
    pub severity: Severity,
    /// One line for a person.
    pub summary: String,
    /// The figures behind it.
    pub details: serde_json::Map<String, serde_json::Value>,
    #[serde(with = "time::serde::rfc3339")]
    pub opened_at: OffsetDateTime,
    #[serde(with = "time::serde::rfc3339")]
    pub updated_at: OffsetDateTime,
    #[serde(default, with = "time::serde::rfc3339::option")]
    pub resolved_at: Option<OffsetDateTime>,
    /// When the destinations last heard of it.
    #[serde(with = "time::serde::rfc3339")]
    pub notified_at: OffsetDateTime,
    /// Notifications sent (opened, updates, resolved).
    pub notifications: u32,
    /// The latest delivery attempts, oldest first (at most [`KEPT_DELIVERIES`]).
    #[serde(default)]
    pub deliveries: Vec<AlertDelivery>,
}

impl Alert {
    /// PagerDuty's `dedup_key`: the same for every notification of this alert.
    pub fn dedup_key(&self) -> String {
        format!("mailward-alert-{}", self.id)
    }

    /// Adds a delivery attempt, keeping the newest [`KEPT_DELIVERIES`].
    pub fn record(&mut self, delivery: AlertDelivery) {
        self.deliveries.push(delivery);
        let extra = self.deliveries.len().saturating_sub(KEPT_DELIVERIES);
        self.deliveries.drain(..extra);
    }
}

/// A condition found holding, from one evaluation.
#[derive(Debug, Clone, PartialEq)]
pub struct Finding {
    /// What it is about (empty: the domain).
    pub subject: String,
    pub summary: String,
    pub details: serde_json::Map<String, serde_json::Value>,
}

/// What one evaluation does to the open alerts of one rule on one domain.
#[derive(Debug, Clone, PartialEq)]
pub enum Transition {
    /// A new alert opens.
    Open(Finding),
    /// An open alert still holds; `notify` when its repeat interval has passed.
    Keep {
        alert: Uuid,
        finding: Finding,
        notify: bool,
    },
    /// An open alert stopped holding.
    Resolve(Uuid),
}

/// Compares the findings of an evaluation with the open alerts `(id, subject, notified_at)`.
pub fn diff(
    findings: Vec<Finding>,
    open: &[(Uuid, String, OffsetDateTime)],
    repeat_interval_minutes: u32,
    now: OffsetDateTime,
) -> Vec<Transition> {
    let interval = time::Duration::minutes(i64::from(repeat_interval_minutes));
    let mut out = Vec::new();
    for (id, subject, _) in open {
        if !findings.iter().any(|f| &f.subject == subject) {
            out.push(Transition::Resolve(*id));
        }
    }
    for finding in findings {
        match open.iter().find(|(_, s, _)| *s == finding.subject) {
            Some((id, _, notified_at)) => out.push(Transition::Keep {
                alert: *id,
                notify: now - *notified_at >= interval,
                finding,
            }),
            None => out.push(Transition::Open(finding)),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn finding(subject: &str) -> Finding {
        Finding {
            subject: subject.into(),
            summary: "s".into(),
            details: Default::default(),
        }
    }

    #[test]
    fn diff_opens_keeps_and_resolves() {
        let now = OffsetDateTime::UNIX_EPOCH + time::Duration::days(1000);
        let a = Uuid::from_u128(1);
        let b = Uuid::from_u128(2);
        let open = vec![
            (a, "kept".to_owned(), now - time::Duration::minutes(30)),
            (b, "gone".to_owned(), now),
        ];
        let out = diff(vec![finding("kept"), finding("new")], &open, 60, now);
        assert!(out.contains(&Transition::Resolve(b)));
        assert!(out.contains(&Transition::Keep {
            alert: a,
            finding: finding("kept"),
            notify: false
        }));
        assert!(out.contains(&Transition::Open(finding("new"))));
        let later = diff(vec![finding("kept")], &open[..1], 30, now);
        assert_eq!(
            later,
            vec![Transition::Keep {
                alert: a,
                finding: finding("kept"),
                notify: true
            }]
        );
    }

    #[test]
    fn scopes_cover_their_domains() {
        let d = Uuid::from_u128(7);
        let g = Uuid::from_u128(8);
        assert!(AlertScope::All.covers(d, None));
        assert!(AlertScope::Groups { group_ids: vec![g] }.covers(d, Some(g)));
        assert!(!AlertScope::Groups { group_ids: vec![g] }.covers(d, None));
        assert!(
            AlertScope::Domains {
                domain_ids: vec![d]
            }
            .covers(d, None)
        );
    }

    #[test]
    fn deliveries_are_capped() {
        let mut alert = Alert {
            id: Uuid::nil(),
            org_id: Uuid::nil(),
            rule_id: Uuid::nil(),
            rule_name: String::new(),
            condition: String::new(),
            domain_id: Uuid::nil(),
            domain: String::new(),
            group_id: None,
            subject: String::new(),
            status: AlertStatus::Open,
            severity: Severity::Error,
            summary: String::new(),
            details: Default::default(),
            opened_at: OffsetDateTime::UNIX_EPOCH,
            updated_at: OffsetDateTime::UNIX_EPOCH,
            resolved_at: None,
            notified_at: OffsetDateTime::UNIX_EPOCH,
            notifications: 0,
            deliveries: Vec::new(),
        };
        for attempt in 0..(KEPT_DELIVERIES as u32 + 5) {
            alert.record(AlertDelivery {
                destination_id: Uuid::nil(),
                kind: DestinationKind::Slack,
                action: AlertAction::Opened,
                attempt,
                succeeded: true,
                response_status: Some(200),
                error: None,
                at: OffsetDateTime::UNIX_EPOCH,
                next_retry_at: None,
            });
        }
        assert_eq!(alert.deliveries.len(), KEPT_DELIVERIES);
        assert_eq!(alert.deliveries[0].attempt, 5);
    }
}
