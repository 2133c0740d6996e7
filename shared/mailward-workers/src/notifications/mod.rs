//! Email notifications (`settings.email_notifications`): the mails people receive when a
//! domain's monitoring moves, when a domain's first aggregate report arrives, and the daily
//! digest of open tasks ([`digest`]) and the daily reminders ([`reminders`]).
//!
//! Each notification is a queued job ([`SEND_NOTIFICATION`]) so the event path never waits on
//! mail. The job reads the organization at send time (a switch turned off meanwhile wins), sends
//! to the organization's administrators and to members limited to the domain's group, and
//! claims `(occurrence, recipient)` in the store first, so a job run twice sends once. Every mail
//! is plain text plus HTML and carries a one-click unsubscribe (RFC 8058) for its switch.

pub mod billing;
pub mod digest;
pub mod reminders;
mod render;
pub mod support;
pub use mailward_app::unsubscribe;

pub use mailward_app::jobs::{
    Kind, Notification, SEND_NOTIFICATION, enqueue_notification as enqueue,
};
use mailward_domain::events::types;
use mailward_domain::model::Role;
use mailward_services::state::AppState;
use mailward_store::outbox::OutboxEvent;
use mailward_store::{accounts, domains, notifications, orgs};
use uuid::Uuid;

pub use mailward_domain::notifications::Switch;

/// Queues the notification of an outbox event, when the event is one people are mailed about.
/// Called by the publisher for every event, on both the local poller and the stream function.
pub async fn on_event(state: &AppState, event: &OutboxEvent) -> anyhow::Result<()> {
    let kind = match event.event_type.as_str() {
        types::DOMAIN_MONITORING_ACTIVATED => Kind::DomainSetup,
        types::DOMAIN_MONITORING_RECOVERED => Kind::DomainRecovered,
        types::DOMAIN_MONITORING_FAILED => Kind::DomainFailed,
        types::DOMAIN_MONITORING_DRIFTED => Kind::DomainDrifted,
        types::DOMAIN_HOSTED_RECORD_ERROR
            if event.record.as_deref() == Some("dmarc")
                && matches!(
                    event
                        .object
                        .get("dmarc_error_reason")
                        .and_then(|v| v.as_str()),
                    Some("drift" | "setup_timeout")
                ) =>
        {
            Kind::DelegationMissing
        }
        types::DOMAIN_HOSTED_RECORD_READY if event.record.as_deref() == Some("spf") => {
            Kind::HostedSpfLive
        }
        _ => return Ok(()),
    };
    let Some(domain_id) = event
        .object
        .get("id")
        .and_then(|v| v.as_str())
        .and_then(|s| s.parse::<Uuid>().ok())
    else {
        tracing::warn!(event.id = %event.id, "monitoring event without a domain id: no notification");
        return Ok(());
    };
    enqueue(
        state,
        Notification {
            org_id: event.org_id,
            domain_id,
            kind,
            occurrence: event.id.clone(),
        },
    )
    .await
}

/// The addresses of an organization's administrators: who receives the organization-wide mails.
pub(crate) async fn administrators(
    store: &dyn mailward_domain::store::ItemStore,
    org: Uuid,
) -> anyhow::Result<Vec<String>> {
    Ok(accounts::members_of(store, org)
        .await?
        .into_iter()
        .filter(|m| m.roles.contains(&Role::Admin) && !m.email.is_empty())
        .map(|m| m.email)
        .collect())
}

/// Runs one notification job: checks the switch now, then mails each recipient once.
pub async fn send(state: &AppState, job: Notification) -> anyhow::Result<()> {
    let store = state.store.as_ref();
    let Some(org) = orgs::get(store, job.org_id).await? else {
        return Ok(());
    };
    // Nothing is mailed to an organization being deleted, switched off by the customer or
    // suspended by staff.
    if !org.value.is_serviced() {
        return Ok(());
    }
    let switch = job.kind.switch();
    if !switch.enabled(&org.value.email_notifications) {
        tracing::info!(org.id = %job.org_id, switch = switch.as_str(), "notification switched off; not sent");
        return Ok(());
    }
    let Some(domain) = domains::get(store, job.org_id, job.domain_id).await? else {
        return Ok(());
    };
    let recipients: Vec<String> = accounts::members_of(store, job.org_id)
        .await?
        .into_iter()
        .filter(|m| {
            m.roles.contains(&Role::Admin)
                || domain.value.group_id.is_some_and(|g| m.groups.contains(&g))
        })
        .map(|m| m.email)
        .filter(|e| !e.is_empty())
        .collect();
    for to in recipients {
        if !notifications::claim(store, job.org_id, &job.occurrence, &to, state.clock.unix())
            .await?
        {
            continue;
        }
        let unsubscribe_url = unsubscribe::url(state, job.org_id, switch);
        let email = render::render(
            state,
            &org.value.name,
            &domain.value,
            job.kind,
            &to,
            &unsubscribe_url,
        );
        if let Err(e) = state.mailer.send(email).await {
            notifications::release(store, job.org_id, &job.occurrence, &to).await?;
            return Err(anyhow::anyhow!("{e}"));
        }
        tracing::info!(org.id = %job.org_id, domain.id = %job.domain_id, kind = ?job.kind, "notification sent");
    }
    Ok(())
}
