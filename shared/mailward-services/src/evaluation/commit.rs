//! Step 5: the pass's writes in one transaction (the domain with its claim released, the
//! activity entry of a status change, the snapshots, the events, the task writes), then what
//! follows it: the task-event checks of tasks that moved, and the report window's daily slide.

use super::Swept;
use super::claim::Claimed;
use super::derive::Derived;
use crate::state::AppState;
use mailward_domain::diff::previous_attributes;
use mailward_domain::domain::{Domain, ManagedStatus, ScoreBand};
use mailward_domain::events::types::{DOMAIN_HOSTED_RECORD_ERROR, DOMAIN_HOSTED_RECORD_READY};
use mailward_domain::store::WriteOp;
use mailward_monitoring::MonitoringEvent;
use mailward_store::outbox::OutboxEvent;
use mailward_store::{domains, snapshots};
use serde_json::{Value, json};
use time::OffsetDateTime;

/// Commits the pass. A domain changed meanwhile (a person's edit, report identification) loses
/// the version check: it is evaluated again on the next pass.
pub async fn commit(
    state: &AppState,
    claimed: &Claimed,
    derived: &Derived,
    now: OffsetDateTime,
) -> anyhow::Result<Swept> {
    let next = &derived.next;
    let org = next.org_id;
    let before_view = serde_json::to_value(state.domain_view(&claimed.before.value))?;
    let after_view = serde_json::to_value(state.domain_view(next))?;
    let mut ops = domains::save_ops(next, &claimed.before.value, claimed.version)?;
    ops.extend(status_activity(&claimed.domain, next, now)?);
    for snapshot in &derived.snapshots {
        ops.extend(snapshots::record_ops(org, snapshot)?);
    }
    ops.extend(hosted_dmarc_event(&claimed.domain, next, &after_view, now)?);
    for event in &derived.events {
        let previous = event_previous(event, &before_view, &after_view);
        ops.push(
            OutboxEvent::new(event.name(), org, now, after_view.clone(), previous).write_op()?,
        );
    }
    let tasks = &derived.tasks;
    let with_tasks = !tasks.ops.is_empty()
        && ops.len() + tasks.ops.len() <= mailward_domain::store::MAX_TRANSACTION_OPS;
    if !with_tasks && !tasks.ops.is_empty() {
        tracing::warn!(domain.id = %next.id, ops = ops.len() + tasks.ops.len(), "too many writes for one transaction; the domain's tasks are reconciled next pass");
    }
    if with_tasks {
        let mut all = ops.clone();
        all.extend(tasks.ops.iter().cloned());
        match state.store.transact(all).await {
            Ok(()) => {
                for task in &tasks.moved {
                    crate::tasks::writes::schedule_check(state, task).await;
                }
                return Ok(Swept::Evaluated(next.monitoring_status));
            }
            // A task changed under the pass (its own delayed check ran) or the domain did: the
            // domain's state is written without the tasks, which the next pass reconciles; a
            // changed domain fails that write too.
            Err(e) if e.is_conflict() => {
                tracing::debug!(domain.id = %next.id, "a task or the domain changed during the pass; committing without the tasks");
            }
            Err(e) => return Err(e.into()),
        }
    }
    match state.store.transact(ops).await {
        Ok(()) => Ok(Swept::Evaluated(next.monitoring_status)),
        Err(e) if e.is_conflict() => Ok(Swept::Superseded),
        Err(e) => Err(e.into()),
    }
}

/// After the commit: the 14-day report window slides daily even when no report arrives, and
/// figures a report was added to are summed over the window again (a write of its own, with
/// its own retries), and a long streak of inconclusive DNS is logged.
pub async fn after(state: &AppState, claimed: &Domain, derived: &Derived, now: OffsetDateTime) {
    let yesterday = now.date().previous_day().unwrap_or(now.date());
    if claimed
        .report_figures
        .as_ref()
        .is_some_and(|f| !f.exact || f.as_of < mailward_store::reports::day_string(yesterday))
        && let Err(e) =
            crate::reports::figures::refresh_figures(state, claimed.org_id, claimed.id, None).await
    {
        tracing::warn!(domain.id = %claimed.id, error = %e, "could not slide the report window");
    }
    if derived.step.indeterminate_alert {
        tracing::warn!(domain.id = %claimed.id, domain.name = %claimed.url, "DNS answers for this domain have been inconclusive for several sweeps");
    }
    let next = &derived.next;
    // A domain that became active or stopped being so changes the billed quantities.
    if crate::usage::state_of(claimed) != crate::usage::state_of(next) {
        crate::usage::quantities_changed(state, claimed.org_id).await;
    }
    // Alerts are judged on what just committed; one lost here is judged again next pass.
    if let Err(e) = crate::alerts::evaluate(
        state,
        claimed.org_id,
        claimed.id,
        mailward_domain::alerts::Trigger::Sweep,
    )
    .await
    {
        tracing::warn!(domain.id = %claimed.id, error = %e, "alert rules could not be evaluated");
    }
    tracing::debug!(domain.id = %claimed.id, status = ?next.monitoring_status, band = ?ScoreBand::of(next.score), "domain swept");
}

/// The activity entry of a monitoring status change.
fn status_activity(
    before: &Domain,
    next: &Domain,
    now: OffsetDateTime,
) -> Result<Vec<WriteOp>, crate::error::ServiceError> {
    if next.monitoring_status == before.monitoring_status {
        return Ok(Vec::new());
    }
    crate::activity::system_ops(
        next.org_id,
        crate::activity::Change::new(
            "domain.monitoring_changed",
            "domain",
            Some(next.id),
            format!(
                "{}: monitoring {:?} → {:?}",
                next.url, before.monitoring_status, next.monitoring_status
            ),
        )
        .previous(Some(json!({
            "monitoring_status": before.monitoring_status.as_str(),
        }))),
        now,
    )
}

/// `domain.hosted_record.ready|error` (`record` dmarc) when hosted DMARC's status moved there.
fn hosted_dmarc_event(
    before: &Domain,
    next: &Domain,
    after_view: &Value,
    now: OffsetDateTime,
) -> Result<Option<WriteOp>, crate::error::ServiceError> {
    if next.managed_dmarc.status == before.managed_dmarc.status {
        return Ok(None);
    }
    let kind = match next.managed_dmarc.status {
        ManagedStatus::Ready => DOMAIN_HOSTED_RECORD_READY,
        ManagedStatus::Error => DOMAIN_HOSTED_RECORD_ERROR,
        _ => return Ok(None),
    };
    let mut event = OutboxEvent::new(kind, next.org_id, now, after_view.clone(), None);
    event.record = Some("dmarc".to_owned());
    Ok(Some(event.write_op()?))
}

/// An event's `previous_attributes`.
fn event_previous(event: &MonitoringEvent, before: &Value, after: &Value) -> Option<Value> {
    match event {
        MonitoringEvent::PolicyChanged { previous } => {
            Some(json!({ "dmarc_policy": previous.as_str() }))
        }
        MonitoringEvent::ScoreBandChanged {
            previous_score,
            previous_band,
        } => Some(json!({
            "score": previous_score,
            "score_band": previous_band.as_str(),
        })),
        MonitoringEvent::Updated { .. } => previous_attributes(before, after),
        _ => None,
    }
}
