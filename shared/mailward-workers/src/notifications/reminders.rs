//! The daily reminders: `setup_reminders` (domains still `pending` a day after they started
//! waiting for their DMARC record), `invitation_reminders` (pending invitations that expire
//! within two days) and `billing_notices` ([`super::billing`]).
//!
//! They ride on the same daily per-organization claim as the task digest
//! ([`super::digest::schedule`] queues [`SEND_REMINDERS`] next to the digest). Each domain is
//! reminded about once per pending spell and each invitation once per expiry, so a reminder is
//! news: one mail per organization and day lists everything newly due, and nothing is sent
//! when nothing is.

use super::render::Reminder;
use super::{Switch, unsubscribe};
pub use mailward_app::jobs::{RemindersJob, SEND_REMINDERS};
use mailward_domain::admin::Invitation;
use mailward_domain::domain::{Domain, MonitoringStatus};
use mailward_domain::model::OrgState;
use mailward_services::state::AppState;
use mailward_store::{domains, invitations, notifications, orgs};
use time::{Duration, OffsetDateTime};

/// How long a domain waits in `pending` before its reminder (the sweep fails it after 72 h).
pub const SETUP_REMINDER_AFTER: Duration = Duration::days(1);

/// How close to its expiry a pending invitation is reminded about.
pub const INVITATION_REMINDER_WITHIN: Duration = Duration::days(2);

/// The marker recipient of the per-item claims: an item is listed once per organization.
const LISTED: &str = "listed";

/// Sends the day's reminders of one organization, each switch read now.
pub async fn send(state: &AppState, job: RemindersJob) -> anyhow::Result<()> {
    let store = state.store.as_ref();
    let Some(org) = orgs::get(store, job.org_id).await? else {
        return Ok(());
    };
    if org.value.state != OrgState::Active {
        return Ok(());
    }
    // The daily report of the subscription's quantities (domains change state in the sweep);
    // a suspended organization's are not reported.
    if org.value.suspension.is_none()
        && let Err(e) = mailward_billing::sync_quantities(state, job.org_id).await
    {
        tracing::warn!(org.id = %job.org_id, error = %e, "billing quantities not reported today");
    }
    if !org.value.is_serviced() {
        return Ok(());
    }
    let settings = &org.value.email_notifications;
    let now = state.clock.now();
    if Switch::SetupReminders.enabled(settings) {
        let due: Vec<(Domain, OffsetDateTime)> = domains::list(store, job.org_id)
            .await?
            .into_iter()
            .filter_map(|d| setup_due(&d, now).map(|since| (d, since)))
            .collect();
        let mut claimed = Vec::new();
        for (domain, since) in &due {
            let occurrence = format!("setup_reminder:{}:{}", domain.id, since.unix_timestamp());
            if notifications::claim(store, job.org_id, &occurrence, LISTED, state.clock.unix())
                .await?
            {
                claimed.push((occurrence, domain, *since));
            }
        }
        if !claimed.is_empty() {
            let reminder = setup_reminder(state, &claimed);
            let occurrences: Vec<String> = claimed.into_iter().map(|(o, _, _)| o).collect();
            deliver(state, &job, &org.value.name, reminder, &occurrences).await?;
        }
    }
    if Switch::InvitationReminders.enabled(settings) {
        let due: Vec<Invitation> = invitations::list(store, job.org_id)
            .await?
            .into_iter()
            .filter(|i| invitation_due(i, now))
            .collect();
        let mut claimed = Vec::new();
        for invitation in &due {
            let occurrence = format!(
                "invitation_reminder:{}:{}",
                invitation.id,
                invitation.expires_at.unix_timestamp()
            );
            if notifications::claim(store, job.org_id, &occurrence, LISTED, state.clock.unix())
                .await?
            {
                claimed.push((occurrence, invitation));
            }
        }
        if !claimed.is_empty() {
            let reminder = invitation_reminder(state, &claimed);
            let occurrences: Vec<String> = claimed.into_iter().map(|(o, _)| o).collect();
            deliver(state, &job, &org.value.name, reminder, &occurrences).await?;
        }
    }
    if Switch::BillingNotices.enabled(settings)
        && let Some((reminder, occurrences)) = super::billing::due(state, &org.value, now).await?
    {
        deliver(state, &job, &org.value.name, reminder, &occurrences).await?;
    }
    Ok(())
}

/// When a domain's wait started, if it is pending and has waited long enough to be reminded.
fn setup_due(domain: &Domain, now: OffsetDateTime) -> Option<OffsetDateTime> {
    if domain.monitoring_status != MonitoringStatus::Pending {
        return None;
    }
    let since = domain
        .pending_since
        .map_or(domain.created_at, |p| p.max(domain.created_at));
    (now - since >= SETUP_REMINDER_AFTER).then_some(since)
}

/// Whether a pending invitation expires soon (and has not expired).
fn invitation_due(invitation: &Invitation, now: OffsetDateTime) -> bool {
    invitation.expires_at > now && invitation.expires_at - now <= INVITATION_REMINDER_WITHIN
}

fn setup_reminder(state: &AppState, due: &[(String, &Domain, OffsetDateTime)]) -> Reminder {
    let base = state.config.base_url.trim_end_matches('/');
    let n = due.len();
    Reminder {
        switch: Switch::SetupReminders,
        subject: if n == 1 {
            format!("{} is still waiting for its DMARC record", due[0].1.url)
        } else {
            format!("{n} domains are still waiting for their DMARC record")
        },
        intro: format!(
            "Mailward has not yet found the DMARC record that sends reports to it for {}:",
            if n == 1 {
                "this domain"
            } else {
                "these domains"
            }
        ),
        items: due
            .iter()
            .map(|(_, d, since)| {
                format!(
                    "{}: waiting since {}; publish the records at {base}/domains/{}/dns-records",
                    d.url,
                    since.date(),
                    d.id
                )
            })
            .collect(),
        todo: format!(
            "Publish each domain's records, then check them with POST {base}/domains/{{id}}/verify. A domain still without its record three days after it started waiting is marked failed."
        ),
    }
}

fn invitation_reminder(state: &AppState, due: &[(String, &Invitation)]) -> Reminder {
    let base = state.config.base_url.trim_end_matches('/');
    let n = due.len();
    Reminder {
        switch: Switch::InvitationReminders,
        subject: if n == 1 {
            format!(
                "The invitation of {} expires soon and was not accepted",
                due[0].1.email
            )
        } else {
            format!("{n} invitations expire soon and were not accepted")
        },
        intro: format!(
            "{} not been accepted yet and will expire:",
            if n == 1 {
                "This invitation has"
            } else {
                "These invitations have"
            }
        ),
        items: due
            .iter()
            .map(|(_, i)| {
                format!(
                    "{}: expires {} UTC; resend it with POST {base}/invitations/{}/resend",
                    i.email,
                    i.expires_at
                        .replace_nanosecond(0)
                        .unwrap_or(i.expires_at)
                        .format(&time::format_description::well_known::Rfc3339)
                        .unwrap_or_default()
                        .trim_end_matches('Z'),
                    i.id
                )
            })
            .collect(),
        todo: "Remind the person to accept, or resend the invitation (a resend mails a new link and renews its expiry). An invitation nobody needs any more can be revoked.".to_owned(),
    }
}

/// Mails a reminder to each administrator once per day; when a send fails, every claim this run
/// took is given back so the job's retry sends the same reminder.
async fn deliver(
    state: &AppState,
    job: &RemindersJob,
    organization: &str,
    reminder: Reminder,
    items: &[String],
) -> anyhow::Result<()> {
    let store = state.store.as_ref();
    let recipients = super::administrators(store, job.org_id).await?;
    let occurrence = format!("{}:{}", reminder.switch.as_str(), job.day);
    for to in recipients {
        if !notifications::claim(store, job.org_id, &occurrence, &to, state.clock.unix()).await? {
            continue;
        }
        let url = unsubscribe::url(state, job.org_id, reminder.switch);
        let email = super::render::reminder(organization, &reminder, &to, &url);
        if let Err(e) = state.mailer.send(email).await {
            notifications::release(store, job.org_id, &occurrence, &to).await?;
            for item in items {
                notifications::release(store, job.org_id, item, LISTED).await?;
            }
            return Err(anyhow::anyhow!("{e}"));
        }
        tracing::info!(org.id = %job.org_id, switch = reminder.switch.as_str(), "reminder sent");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use time::macros::datetime;
    use uuid::Uuid;

    fn domain(status: MonitoringStatus, pending_since: Option<OffsetDateTime>) -> Domain {
        let mut d = Domain::new(
            Uuid::nil(),
            Uuid::nil(),
            "a.example".into(),
            datetime!(2026-01-01 0:00 UTC),
        );
        d.monitoring_status = status;
        d.pending_since = pending_since;
        d
    }

    #[test]
    fn a_domain_is_due_a_day_after_it_started_waiting() {
        let d = domain(MonitoringStatus::Pending, None);
        assert_eq!(setup_due(&d, datetime!(2026-01-01 23:59 UTC)), None);
        assert_eq!(
            setup_due(&d, datetime!(2026-01-02 0:00 UTC)),
            Some(datetime!(2026-01-01 0:00 UTC))
        );
        let again = domain(
            MonitoringStatus::Pending,
            Some(datetime!(2026-03-01 12:00 UTC)),
        );
        assert_eq!(setup_due(&again, datetime!(2026-03-02 11:00 UTC)), None);
        assert!(setup_due(&again, datetime!(2026-03-02 12:00 UTC)).is_some());
        let set_up = domain(MonitoringStatus::Setup, None);
        assert_eq!(setup_due(&set_up, datetime!(2026-02-01 0:00 UTC)), None);
    }
}
