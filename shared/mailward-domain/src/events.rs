//! The event catalogue (SPEC §6.1): every event type, when it fires and the resource it carries.
//! One definition, served by `GET /webhook-events` and used to validate `enabled_events`.
//! Names are additive: none is renamed or repurposed.

/// The event type names, one constant each, so code never spells an event name twice.
pub mod types {
    /// `domain.created`.
    pub const DOMAIN_CREATED: &str = "domain.created";
    /// `domain.updated`.
    pub const DOMAIN_UPDATED: &str = "domain.updated";
    /// `domain.deleted`.
    pub const DOMAIN_DELETED: &str = "domain.deleted";
    /// `domain.monitoring.activated`.
    pub const DOMAIN_MONITORING_ACTIVATED: &str = "domain.monitoring.activated";
    /// `domain.monitoring.failed`.
    pub const DOMAIN_MONITORING_FAILED: &str = "domain.monitoring.failed";
    /// `domain.monitoring.drifted`.
    pub const DOMAIN_MONITORING_DRIFTED: &str = "domain.monitoring.drifted";
    /// `domain.monitoring.recovered`.
    pub const DOMAIN_MONITORING_RECOVERED: &str = "domain.monitoring.recovered";
    /// `domain.hosted_record.ready`.
    pub const DOMAIN_HOSTED_RECORD_READY: &str = "domain.hosted_record.ready";
    /// `domain.hosted_record.error`.
    pub const DOMAIN_HOSTED_RECORD_ERROR: &str = "domain.hosted_record.error";
    /// `domain.score_changed`.
    pub const DOMAIN_SCORE_CHANGED: &str = "domain.score_changed";
    /// `domain.policy_changed`.
    pub const DOMAIN_POLICY_CHANGED: &str = "domain.policy_changed";
    /// `mta_sts.enabled`.
    pub const MTA_STS_ENABLED: &str = "mta_sts.enabled";
    /// `mta_sts.updated`.
    pub const MTA_STS_UPDATED: &str = "mta_sts.updated";
    /// `mta_sts.disabled`.
    pub const MTA_STS_DISABLED: &str = "mta_sts.disabled";
    /// `task.opened`.
    pub const TASK_OPENED: &str = "task.opened";
    /// `task.completed`.
    pub const TASK_COMPLETED: &str = "task.completed";
    /// `task.canceled`.
    pub const TASK_CANCELED: &str = "task.canceled";
    /// `task.dismissed`.
    pub const TASK_DISMISSED: &str = "task.dismissed";
    /// `task.reopened`.
    pub const TASK_REOPENED: &str = "task.reopened";
    /// `organization.updated`.
    pub const ORGANIZATION_UPDATED: &str = "organization.updated";
    /// `member.added`.
    pub const MEMBER_ADDED: &str = "member.added";
    /// `member.updated`.
    pub const MEMBER_UPDATED: &str = "member.updated";
    /// `member.removed`.
    pub const MEMBER_REMOVED: &str = "member.removed";
    /// `invitation.created`.
    pub const INVITATION_CREATED: &str = "invitation.created";
    /// `invitation.revoked`.
    pub const INVITATION_REVOKED: &str = "invitation.revoked";
    /// `group.created`.
    pub const GROUP_CREATED: &str = "group.created";
    /// `group.updated`.
    pub const GROUP_UPDATED: &str = "group.updated";
    /// `group.deleted`.
    pub const GROUP_DELETED: &str = "group.deleted";
    /// `alert.opened`.
    pub const ALERT_OPENED: &str = "alert.opened";
    /// `alert.updated`.
    pub const ALERT_UPDATED: &str = "alert.updated";
    /// `alert.resolved`.
    pub const ALERT_RESOLVED: &str = "alert.resolved";
}

use types::*;

/// One catalogue entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EventType {
    /// The event name, e.g. `domain.created`.
    pub name: &'static str,
    /// When it fires.
    pub description: &'static str,
    /// The kind of resource in `data.object`.
    pub object: &'static str,
}

const fn event(name: &'static str, description: &'static str, object: &'static str) -> EventType {
    EventType {
        name,
        description,
        object,
    }
}

/// Every event type, in catalogue order.
pub const CATALOGUE: &[EventType] = &[
    event(DOMAIN_CREATED, "A domain was added.", "domain"),
    event(
        DOMAIN_UPDATED,
        "A domain changed: monitoring transitions, score changes, configuration updates.",
        "domain",
    ),
    event(
        DOMAIN_DELETED,
        "A domain was removed; the object is the domain as it was just before.",
        "domain",
    ),
    event(
        DOMAIN_MONITORING_ACTIVATED,
        "The domain reached full DMARC monitoring for the first time.",
        "domain",
    ),
    event(
        DOMAIN_MONITORING_FAILED,
        "Monitoring could not be established or was lost; the domain carries monitoring_failure_reason.",
        "domain",
    ),
    event(
        DOMAIN_MONITORING_DRIFTED,
        "A set-up domain no longer resolves the expected records.",
        "domain",
    ),
    event(
        DOMAIN_MONITORING_RECOVERED,
        "The domain returned to full monitoring after drift or failure.",
        "domain",
    ),
    event(
        DOMAIN_HOSTED_RECORD_READY,
        "A hosted record is live; data.record names it (dmarc, spf, dkim, bimi or mta_sts).",
        "domain",
    ),
    event(
        DOMAIN_HOSTED_RECORD_ERROR,
        "A hosted record is in error; data.record names it.",
        "domain",
    ),
    event(
        DOMAIN_SCORE_CHANGED,
        "The domain crossed a score band; the old score and band are in data.previous_attributes.",
        "domain",
    ),
    event(
        DOMAIN_POLICY_CHANGED,
        "The DMARC policy changed; the old policy is in data.previous_attributes.",
        "domain",
    ),
    event(MTA_STS_ENABLED, "Hosted MTA-STS was enabled.", "mta_sts"),
    event(
        MTA_STS_UPDATED,
        "The hosted MTA-STS policy changed (mode, MX hosts).",
        "mta_sts",
    ),
    event(MTA_STS_DISABLED, "Hosted MTA-STS was disabled.", "mta_sts"),
    event(
        TASK_OPENED,
        "A task opened and stayed open through the four-hour stabilisation window.",
        "task",
    ),
    event(TASK_COMPLETED, "A task was resolved.", "task"),
    event(
        TASK_CANCELED,
        "The service closed a task as no longer applicable.",
        "task",
    ),
    event(TASK_DISMISSED, "A person dismissed a task.", "task"),
    event(
        TASK_REOPENED,
        "A resolved or canceled task came back.",
        "task",
    ),
    event(
        ORGANIZATION_UPDATED,
        "Organization details or settings changed.",
        "organization",
    ),
    event(
        MEMBER_ADDED,
        "An existing account was added to the organization.",
        "member",
    ),
    event(
        MEMBER_UPDATED,
        "A member's roles or group access changed.",
        "member",
    ),
    event(MEMBER_REMOVED, "A member was removed.", "member"),
    event(
        INVITATION_CREATED,
        "An invitation was issued.",
        "invitation",
    ),
    event(
        INVITATION_REVOKED,
        "A pending invitation was withdrawn.",
        "invitation",
    ),
    event(GROUP_CREATED, "A group was created.", "group"),
    event(GROUP_UPDATED, "A group changed.", "group"),
    event(GROUP_DELETED, "A group was deleted.", "group"),
    event(
        ALERT_OPENED,
        "An alert rule's condition started holding for a domain (extension).",
        "alert",
    ),
    event(
        ALERT_UPDATED,
        "An open alert still holds; sent at most once per the rule's repeat interval (extension).",
        "alert",
    ),
    event(
        ALERT_RESOLVED,
        "An alert stopped holding, or its rule or domain went away (extension).",
        "alert",
    ),
];

/// The catalogue entry of a name, if it is one.
pub fn lookup(name: &str) -> Option<&'static EventType> {
    CATALOGUE.iter().find(|e| e.name == name)
}

/// Whether an endpoint subscribed to `enabled` receives `event` (an empty list means every
/// event, including future ones).
pub fn is_subscribed(enabled: &[String], event: &str) -> bool {
    enabled.is_empty() || enabled.iter().any(|e| e == event)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn catalogue_names_are_unique_and_lowercase() {
        let mut names: Vec<&str> = CATALOGUE.iter().map(|e| e.name).collect();
        assert!(names.iter().all(|n| {
            n.chars()
                .all(|c| c.is_ascii_lowercase() || c == '.' || c == '_')
        }));
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), CATALOGUE.len());
        assert_eq!(CATALOGUE.len(), 31);
    }

    #[test]
    fn empty_subscription_means_everything() {
        assert!(is_subscribed(&[], "domain.created"));
        assert!(is_subscribed(&[], "some.future.event"));
        assert!(is_subscribed(&["task.opened".into()], "task.opened"));
        assert!(!is_subscribed(&["task.opened".into()], "task.completed"));
    }
}
