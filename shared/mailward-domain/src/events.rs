//! The event catalogue (SPEC §6.1): every event type, when it fires and the resource it carries.
//! One definition, served by `GET /webhook-events` and used to validate `enabled_events`.
//! Names are additive: none is renamed or repurposed.

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
    event("domain.created", "A domain was added.", "domain"),
    event(
        "domain.updated",
        "A domain changed: monitoring transitions, score changes, configuration updates.",
        "domain",
    ),
    event(
        "domain.deleted",
        "A domain was removed; the object is the domain as it was just before.",
        "domain",
    ),
    event(
        "domain.monitoring.activated",
        "The domain reached full DMARC monitoring for the first time.",
        "domain",
    ),
    event(
        "domain.monitoring.failed",
        "Monitoring could not be established or was lost; the domain carries monitoring_failure_reason.",
        "domain",
    ),
    event(
        "domain.monitoring.drifted",
        "A set-up domain no longer resolves the expected records.",
        "domain",
    ),
    event(
        "domain.monitoring.recovered",
        "The domain returned to full monitoring after drift or failure.",
        "domain",
    ),
    event(
        "domain.hosted_record.ready",
        "A hosted record is live; data.record names it (dmarc, spf, dkim, bimi or mta_sts).",
        "domain",
    ),
    event(
        "domain.hosted_record.error",
        "A hosted record is in error; data.record names it.",
        "domain",
    ),
    event(
        "domain.score_changed",
        "The domain crossed a score band; the old score and band are in data.previous_attributes.",
        "domain",
    ),
    event(
        "domain.policy_changed",
        "The DMARC policy changed; the old policy is in data.previous_attributes.",
        "domain",
    ),
    event("mta_sts.enabled", "Hosted MTA-STS was enabled.", "mta_sts"),
    event(
        "mta_sts.updated",
        "The hosted MTA-STS policy changed (mode, MX hosts).",
        "mta_sts",
    ),
    event(
        "mta_sts.disabled",
        "Hosted MTA-STS was disabled.",
        "mta_sts",
    ),
    event(
        "task.opened",
        "A task opened and stayed open through the four-hour stabilisation window.",
        "task",
    ),
    event("task.completed", "A task was resolved.", "task"),
    event(
        "task.canceled",
        "The service closed a task as no longer applicable.",
        "task",
    ),
    event("task.dismissed", "A person dismissed a task.", "task"),
    event(
        "task.reopened",
        "A resolved or canceled task came back.",
        "task",
    ),
    event(
        "organization.updated",
        "Organization details or settings changed.",
        "organization",
    ),
    event(
        "member.added",
        "An existing account was added to the organization.",
        "member",
    ),
    event(
        "member.updated",
        "A member's roles or group access changed.",
        "member",
    ),
    event("member.removed", "A member was removed.", "member"),
    event(
        "invitation.created",
        "An invitation was issued.",
        "invitation",
    ),
    event(
        "invitation.revoked",
        "A pending invitation was withdrawn.",
        "invitation",
    ),
    event("group.created", "A group was created.", "group"),
    event("group.updated", "A group changed.", "group"),
    event("group.deleted", "A group was deleted.", "group"),
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
        assert_eq!(CATALOGUE.len(), 28);
    }

    #[test]
    fn empty_subscription_means_everything() {
        assert!(is_subscribed(&[], "domain.created"));
        assert!(is_subscribed(&[], "some.future.event"));
        assert!(is_subscribed(&["task.opened".into()], "task.opened"));
        assert!(!is_subscribed(&["task.opened".into()], "task.completed"));
    }
}
