//! The daily digest of open tasks (`tasks_digests`): one mail per organization and day, listing
//! the open tasks by priority, skipped when it would list exactly what the last one did.
//!
//! Scheduling rides on the sweep (EventBridge on AWS, the local interval): after a batch, each
//! organization in it claims today's digest once ([`schedule`]); the claim queues
//! [`SEND_DIGEST`] and the day's reminders ([`super::reminders::SEND_REMINDERS`]).

use super::render::Line;
use super::{Switch, unsubscribe};
pub use mailward_app::jobs::{DigestJob, SEND_DIGEST};
use mailward_services::state::AppState;
use mailward_store::{domains, notifications, orgs, tasks};
use mailward_tasks::model::TaskStatus;
use std::collections::HashMap;
use uuid::Uuid;

/// Queues today's digest and reminders of `org` unless they were queued already today.
pub async fn schedule(state: &AppState, org: Uuid) -> anyhow::Result<()> {
    let day = state.clock.now().date().to_string();
    if !notifications::claim_digest_day(state.store.as_ref(), org, &day, state.clock.unix()).await?
    {
        return Ok(());
    }
    let reminders = super::reminders::RemindersJob {
        org_id: org,
        day: day.clone(),
    };
    mailward_services::job::enqueue(state, &reminders, 0).await?;
    mailward_services::job::enqueue(state, &DigestJob { org_id: org, day }, 0).await?;
    Ok(())
}

/// Sends the digest: the switch is read now, nothing is sent without open tasks or when the
/// open tasks are those of the last digest.
pub async fn send(state: &AppState, job: DigestJob) -> anyhow::Result<()> {
    let store = state.store.as_ref();
    let Some(org) = orgs::get(store, job.org_id).await? else {
        return Ok(());
    };
    if !org.value.is_serviced() || !Switch::TasksDigests.enabled(&org.value.email_notifications) {
        return Ok(());
    }
    let mut open: Vec<_> = tasks::list(store, job.org_id)
        .await?
        .into_iter()
        .filter(|t| t.status == TaskStatus::Open)
        .collect();
    if open.is_empty() {
        return Ok(());
    }
    open.sort_by_key(|t| (t.priority, t.sequence, t.id));
    let fingerprint = mailward_domain::secrets::sha256_hex(
        open.iter()
            .map(|t| format!("{}:{}\n", t.id, t.priority))
            .collect::<String>()
            .as_bytes(),
    );
    if notifications::last_digest(store, job.org_id)
        .await?
        .as_deref()
        == Some(&fingerprint)
    {
        tracing::info!(org.id = %job.org_id, "task digest unchanged since the last one; not sent");
        return Ok(());
    }
    let names: HashMap<Uuid, String> = domains::list(store, job.org_id)
        .await?
        .into_iter()
        .map(|d| (d.id, d.url))
        .collect();
    let lines: Vec<Line> = open
        .iter()
        .map(|t| Line {
            priority: t.priority,
            domain: names.get(&t.domain_id).cloned().unwrap_or_default(),
            description: t.description.clone(),
        })
        .collect();
    let recipients = super::administrators(store, job.org_id).await?;
    let occurrence = format!("digest:{}", job.day);
    for to in recipients {
        if !notifications::claim(store, job.org_id, &occurrence, &to, state.clock.unix()).await? {
            continue;
        }
        let url = unsubscribe::url(state, job.org_id, Switch::TasksDigests);
        let email = super::render::digest(state, &org.value.name, &lines, &to, &url);
        if let Err(e) = state.mailer.send(email).await {
            notifications::release(store, job.org_id, &occurrence, &to).await?;
            return Err(anyhow::anyhow!("{e}"));
        }
    }
    notifications::save_digest(store, job.org_id, &fingerprint).await?;
    Ok(())
}
