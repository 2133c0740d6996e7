//! The switches of an organization's `settings.email_notifications` (SPEC §2.12): one per kind of
//! mail Mailward sends, each turned off by the mail's own unsubscribe link.

use crate::model::EmailNotifications;
use serde::{Deserialize, Serialize};

/// The switches of `settings.email_notifications` Mailward sends mail for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Switch {
    /// `domain_drifted`.
    DomainDrifted,
    /// `domain_failed`.
    DomainFailed,
    /// `domain_setup`.
    DomainSetup,
    /// `first_report`.
    FirstReport,
    /// `tasks_digests`.
    TasksDigests,
    /// `setup_reminders`.
    SetupReminders,
    /// `invitation_reminders`.
    InvitationReminders,
    /// `delegation_missing`.
    DelegationMissing,
    /// `hosted_spf_live`.
    HostedSpfLive,
    /// `billing_notices`.
    BillingNotices,
    /// `alerts`.
    Alerts,
    /// `scheduled_reports`.
    ScheduledReports,
}

impl Switch {
    /// The setting's name.
    pub fn as_str(self) -> &'static str {
        match self {
            Switch::DomainDrifted => "domain_drifted",
            Switch::DomainFailed => "domain_failed",
            Switch::DomainSetup => "domain_setup",
            Switch::FirstReport => "first_report",
            Switch::TasksDigests => "tasks_digests",
            Switch::SetupReminders => "setup_reminders",
            Switch::InvitationReminders => "invitation_reminders",
            Switch::DelegationMissing => "delegation_missing",
            Switch::HostedSpfLive => "hosted_spf_live",
            Switch::BillingNotices => "billing_notices",
            Switch::Alerts => "alerts",
            Switch::ScheduledReports => "scheduled_reports",
        }
    }

    /// Parses a setting's name.
    pub fn parse(name: &str) -> Option<Self> {
        [
            Switch::DomainDrifted,
            Switch::DomainFailed,
            Switch::DomainSetup,
            Switch::FirstReport,
            Switch::TasksDigests,
            Switch::SetupReminders,
            Switch::InvitationReminders,
            Switch::DelegationMissing,
            Switch::HostedSpfLive,
            Switch::BillingNotices,
            Switch::Alerts,
            Switch::ScheduledReports,
        ]
        .into_iter()
        .find(|s| s.as_str() == name)
    }

    /// Whether the organization wants this mail.
    pub fn enabled(self, settings: &EmailNotifications) -> bool {
        match self {
            Switch::DomainDrifted => settings.domain_drifted,
            Switch::DomainFailed => settings.domain_failed,
            Switch::DomainSetup => settings.domain_setup,
            Switch::FirstReport => settings.first_report,
            Switch::TasksDigests => settings.tasks_digests,
            Switch::SetupReminders => settings.setup_reminders,
            Switch::InvitationReminders => settings.invitation_reminders,
            Switch::DelegationMissing => settings.delegation_missing,
            Switch::HostedSpfLive => settings.hosted_spf_live,
            Switch::BillingNotices => settings.billing_notices,
            Switch::Alerts => settings.alerts,
            Switch::ScheduledReports => settings.scheduled_reports,
        }
    }

    /// Turns the switch off.
    pub fn disable(self, settings: &mut EmailNotifications) {
        match self {
            Switch::DomainDrifted => settings.domain_drifted = false,
            Switch::DomainFailed => settings.domain_failed = false,
            Switch::DomainSetup => settings.domain_setup = false,
            Switch::FirstReport => settings.first_report = false,
            Switch::TasksDigests => settings.tasks_digests = false,
            Switch::SetupReminders => settings.setup_reminders = false,
            Switch::InvitationReminders => settings.invitation_reminders = false,
            Switch::DelegationMissing => settings.delegation_missing = false,
            Switch::HostedSpfLive => settings.hosted_spf_live = false,
            Switch::BillingNotices => settings.billing_notices = false,
            Switch::Alerts => settings.alerts = false,
            Switch::ScheduledReports => settings.scheduled_reports = false,
        }
    }
}
