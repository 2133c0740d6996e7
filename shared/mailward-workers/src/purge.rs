//! An organization's deletion (SPEC `DELETE /organizations/{id}`, asynchronous): the purge the
//! [`DeleteOrganization`](mailward_app::jobs::DeleteOrganization) job runs once the
//! organization is marked `deleting` (every credential of it is refused from that commit on).
//!
//! In order, so that a crash half-way leaves a repeatable job:
//! 1. what Mailward serves for its domains (hosted records, MTA-STS policies, report
//!    authorizations no other organization needs) and the evidence its reports gave of
//!    candidates for the source catalogue;
//! 2. its customer at the payment provider (subscriptions cancelled at once);
//! 3. what its people leave outside the partition ([`retention::people_of`]) and its events
//!    still in the outbox;
//! 4. the partition with the global entries pointing into it ([`orgs::purge`]), the
//!    organization record last;
//! 5. its objects: support attachments, export archives, and the raw deliveries of its
//!    reports that no organization watching the same name still needs.
//!
//! It runs twice. A job already running when the purge begins (a sender identification doing
//! its reverse-DNS lookups, for one) may write after the first pass; jobs that start later see
//! the organization `deleting` or its domains gone and write nothing. So the first pass keeps
//! the organization record and a note per domain, and queues the final pass
//! `Config::purge_final_pass_delay_secs` later (15 minutes: longer than any job runs), which
//! repeats every step and removes the record last.

use mailward_app::AppState;
use mailward_app::jobs::DeleteOrganization;
use mailward_domain::model::OrgState;
use mailward_store::{domains, orgs, reports, retention};
use uuid::Uuid;

/// Purges an organization marked `deleting`; anything else is left alone. The first pass
/// queues the final one.
pub async fn delete_organization(
    state: &AppState,
    org_id: Uuid,
    final_pass: bool,
) -> anyhow::Result<()> {
    let store = state.store.as_ref();
    let Some(org) = orgs::get(store, org_id).await? else {
        return Ok(());
    };
    if org.value.state != OrgState::Deleting {
        tracing::warn!(org.id = %org_id, "refusing to purge an organization that is not marked deleting");
        return Ok(());
    }
    let list = domains::list(store, org_id).await?;
    for domain in &list {
        mailward_services::domains::hosting::withdraw(state, domain).await;
        // What its reports told staff of senders outside the catalogue.
        mailward_store::candidates::forget_domain(store, domain.id).await?;
    }
    let mut raw = Vec::new();
    let archives = mailward_domain::store::query_all(
        store,
        mailward_domain::store::Query::partition(mailward_store::keys::org_pk(org_id))
            .prefix(mailward_store::keys::EXPORT_PREFIX),
    )
    .await?;
    for item in &archives {
        let export: mailward_domain::admin::OrgExport = mailward_store::decode(item)?;
        // An archive is the organization's alone: no watcher keeps it.
        raw.extend(export.object_key.map(|key| (key, String::new())));
    }
    for domain in &list {
        for report in reports::list(store, org_id, domain.id).await? {
            if let Some(key) = report.raw_key {
                raw.push((key, report.policy_domain.to_ascii_lowercase()));
            }
        }
    }
    forget_customer(state, org_id).await?;
    let mut outside = retention::people_of(store, org_id).await?;
    outside.extend(retention::outbox_of(store, org_id).await?);
    retention::delete_all(store, outside).await?;
    if !final_pass {
        // Queued before anything is removed: a queue outage fails this pass, which is retried.
        let next = DeleteOrganization {
            org_id,
            final_pass: true,
        };
        let delay = state.config.purge_final_pass_delay_secs;
        mailward_services::job::enqueue(state, &next, delay).await?;
    }
    let items = orgs::purge(store, org_id, !final_pass).await?;
    let objects = remove_objects(state, org_id, raw).await?;
    tracing::info!(org.id = %org_id, items, objects, final_pass, "organization purged");
    Ok(())
}

/// Deletes the organization's customer at the payment provider (which cancels its
/// subscriptions): a deleted organization is never billed again. A provider outage fails the
/// job, which the queue retries.
async fn forget_customer(state: &AppState, org: Uuid) -> anyhow::Result<()> {
    let account = mailward_store::billing::get(state.store.as_ref(), org).await?;
    let customer = account.and_then(|a| a.value.customer_id);
    if let (Some(customer), Some(payments)) = (customer, state.payments.as_ref()) {
        payments.delete_customer(&customer).await?;
    }
    Ok(())
}

/// Removes the organization's support attachments, and each raw delivery of its reports once
/// no organization watches the report's domain name any more. Returns how many objects went.
async fn remove_objects(
    state: &AppState,
    org: Uuid,
    raw: Vec<(String, String)>,
) -> anyhow::Result<usize> {
    let Some(objects) = state.objects.as_ref() else {
        return Ok(0);
    };
    let mut keys = objects.list(&format!("support/{org}/")).await?;
    for (key, name) in raw {
        if name.is_empty()
            || reports::watchers(state.store.as_ref(), &name)
                .await?
                .is_empty()
        {
            keys.push(key);
        }
    }
    for key in &keys {
        objects.delete(key).await?;
    }
    Ok(keys.len())
}
