//! A domain's senders (SPEC §2.6 DomainSource): identified from the stored report rows after
//! each import (a queued job, so reverse DNS never slows ingestion), listed and moved by people
//! (§3), and turned into sender tasks through the task engine.
//!
//! Identification re-reads the domain's rows within the plan's retention and rebuilds every
//! sender's figures from them, so running it twice (at-least-once delivery) changes nothing.
//! Reverse DNS is forward-confirmed (the name must resolve back to the address) before it can
//! name a sender: anyone can publish any PTR name for addresses they control.

use super::window::pct;
use crate::caller::Caller;
use crate::error::ServiceError;
use crate::state::AppState;
use mailward_api_types::senders::{DomainSourceView, UpdateDomainSourceRequest};
pub use mailward_app::jobs::{IDENTIFY_SENDERS, IdentifySenders};
use mailward_domain::dns::{RecordData, RecordType};
use mailward_domain::domain::Domain;
use mailward_domain::senders::{ConfirmationStatus, DomainSource};
use mailward_store::domains;
use mailward_store::senders as stored;
use mailward_tasks::TaskType;
use mailward_tasks::problems::SenderFinding;
use std::collections::BTreeSet;
use std::time::Duration as StdDuration;
use time::{Date, OffsetDateTime};
use uuid::Uuid;

/// Days of the recent window the sender tasks judge.
pub const RECENT_DAYS: i64 = 30;
/// Time limit of the live SPF lookup the sender tasks compare with.
const LOOKUP_TIMEOUT: StdDuration = StdDuration::from_secs(2);

/// The domain's live SPF record: `Some(None)` when it has none, `None` when the lookup failed.
pub async fn live_spf(app: &AppState, domain: &str) -> Option<Option<String>> {
    let lookup = app.resolver.lookup(domain, RecordType::Txt);
    match tokio::time::timeout(LOOKUP_TIMEOUT, lookup).await {
        Ok(Ok(answer)) => Some(
            answer
                .records
                .iter()
                .filter_map(RecordData::txt_value)
                .find(|t| t.to_ascii_lowercase().starts_with("v=spf1")),
        ),
        Ok(Err(e)) if e.is_definitive() => Some(None),
        _ => None,
    }
}

/// Whether an SPF record holds `mechanism` (case-insensitive, any qualifier).
fn spf_holds(record: &str, mechanism: &str) -> bool {
    let wanted = mechanism.trim_start_matches(['+', '-', '~', '?']);
    record.split_ascii_whitespace().any(|term| {
        term.trim_start_matches(['+', '-', '~', '?'])
            .eq_ignore_ascii_case(wanted)
    })
}

/// The task engine's view of the domain's senders. `live_spf` is `None` when the SPF record
/// could not be read (then the cleanup task is not judged).
pub fn findings_of(
    domain: &Domain,
    sources: &[DomainSource],
    live_spf: Option<&Option<String>>,
    today: Date,
) -> Vec<SenderFinding> {
    let monitored: BTreeSet<String> = domain
        .dkim_selectors_seen
        .iter()
        .map(|s| s.to_ascii_lowercase())
        .collect();
    let probed = domain.dkim_full_probe_at.is_some();
    sources
        .iter()
        .map(|s| {
            let days_since_seen = s.last_seen_at.as_deref().and_then(|d| {
                let day = Date::parse(d, time::macros::format_description!("[year]-[month]-[day]"))
                    .ok()?;
                Some((today - day).whole_days())
            });
            let published = match (live_spf, &s.spf_value) {
                (Some(Some(record)), Some(value)) if spf_holds(record, value) => {
                    Some(value.clone())
                }
                _ => None,
            };
            SenderFinding {
                sender_id: s.id,
                source_id: s.source_id,
                name: s
                    .source_name
                    .clone()
                    .or_else(|| s.sending_domain.clone())
                    .unwrap_or_else(|| s.key.clone()),
                sending_domain: s.sending_domain.clone(),
                status: s.confirmation_status,
                volume: s.recent.volume,
                dmarc_pass_pct: pct(s.recent.dmarc_pass, s.recent.volume),
                spf_pass_pct: pct(s.recent.spf_aligned_pass, s.recent.volume),
                dkim_pass_pct: pct(s.recent.dkim_aligned_pass, s.recent.volume),
                ignore_spf: s.ignore_spf,
                ignore_dkim: s.ignore_dkim,
                days_since_seen,
                spf_value_published: published,
                unmonitored_selectors: if probed {
                    s.dkim_selectors
                        .iter()
                        .filter(|sel| !monitored.contains(*sel))
                        .cloned()
                        .collect()
                } else {
                    Vec::new()
                },
            }
        })
        .collect()
}

/// The engine's findings for the senders, judging only what the evidence allows.
pub fn sender_findings(
    domain: &Domain,
    sources: &[DomainSource],
    live_spf: Option<&Option<String>>,
    today: Date,
) -> mailward_tasks::Findings {
    let senders = findings_of(domain, sources, live_spf, today);
    let mut findings = mailward_tasks::problems::derive_sender_findings(&senders);
    if live_spf.is_none() {
        findings.judged.remove(&TaskType::CleanupSenderRecords);
    }
    if domain.dkim_full_probe_at.is_none() {
        findings.judged.remove(&TaskType::DkimSelectorNotImported);
    }
    findings
}

/// Reconciles the domain's sender tasks (and only those) with its senders.
pub async fn reconcile_tasks(
    app: &AppState,
    domain: &Domain,
    sources: &[DomainSource],
    live_spf: Option<&Option<String>>,
) -> Result<(), ServiceError> {
    reconcile_findings(app, domain, |current, now| {
        sender_findings(current, sources, live_spf, now.date())
    })
    .await
}

/// Reconciles the domain's tasks of the types `make` judges with its findings (made from the
/// domain as read, retried when a concurrent evaluation changed it).
pub(crate) async fn reconcile_findings(
    app: &AppState,
    domain: &Domain,
    make: impl Fn(&Domain, OffsetDateTime) -> mailward_tasks::Findings,
) -> Result<(), ServiceError> {
    let store = app.store.as_ref();
    for _ in 0..5 {
        let now = app.clock.now();
        let Some(current) = domains::get(store, domain.org_id, domain.id).await? else {
            return Ok(());
        };
        let findings = make(&current.value, now);
        let existing =
            mailward_store::tasks::list_for_domain(store, domain.org_id, domain.id).await?;
        let writes = crate::tasks::writes::sweep_writes(
            &app.config,
            &current.value,
            &existing,
            &findings,
            None,
            now,
        )?;
        let mut ops = writes.ops;
        let counters = (
            current.value.open_tasks_count,
            current.value.highest_open_task_priority,
        );
        if ops.is_empty() && writes.counters == counters {
            return Ok(());
        }
        let mut next = current.value.clone();
        (next.open_tasks_count, next.highest_open_task_priority) = writes.counters;
        // The domain item is always written so a concurrent sweep's reconciliation conflicts.
        ops.extend(domains::save_ops(&next, &current.value, current.version)?);
        match store.transact(ops).await {
            Ok(()) => {
                for task in &writes.moved {
                    crate::tasks::writes::schedule_check(app, task).await;
                }
                return Ok(());
            }
            Err(e) if e.is_conflict() => continue,
            Err(e) => return Err(e.into()),
        }
    }
    Err(ServiceError::conflict(
        "the domain kept changing while its tasks were reconciled",
    ))
}

fn view(source: &DomainSource) -> DomainSourceView {
    DomainSourceView::of(source, None, None)
}

/// A domain's senders: most recently seen first, then by volume.
pub async fn list(
    app: &AppState,
    caller: &Caller,
    domain_id: Uuid,
) -> Result<Vec<DomainSourceView>, ServiceError> {
    crate::access::load(app, caller, domain_id).await?;
    let mut sources: Vec<DomainSource> = stored::list(app.store.as_ref(), caller.org_id, domain_id)
        .await?
        .into_iter()
        .map(|s| s.value)
        .collect();
    let volume = |s: &DomainSource| {
        s.totals.compliant + s.totals.non_compliant + s.totals.forwarded + s.totals.unknown
    };
    sources.sort_by(|a, b| {
        b.last_seen_at
            .cmp(&a.last_seen_at)
            .then(volume(b).cmp(&volume(a)))
            .then(a.id.cmp(&b.id))
    });
    Ok(sources.iter().map(view).collect())
}

/// Applies a confirmation move to a stored sender (SPEC §3), with the time of a confirmation.
fn moved(source: &DomainSource, status: ConfirmationStatus, now: OffsetDateTime) -> DomainSource {
    let mut next = source.clone();
    if next.confirmation_status != status {
        next.confirmation_status = status;
        next.confirmed_at = (status == ConfirmationStatus::Confirmed).then_some(now);
        next.updated_at = now;
    }
    next
}

/// A person's move of a sender (`POST /domains/{domainId}/sources/{sourceId}`); the sender
/// tasks follow at once.
pub async fn update(
    app: &AppState,
    caller: &Caller,
    domain_id: Uuid,
    source_id: Uuid,
    input: UpdateDomainSourceRequest,
) -> Result<DomainSourceView, ServiceError> {
    caller.require_write()?;
    let raw = input.confirmation_status.as_deref().ok_or_else(|| {
        ServiceError::invalid("confirmation_status", "confirmation_status is required")
    })?;
    let status = ConfirmationStatus::parse(raw).ok_or_else(|| {
        ServiceError::invalid(
            "confirmation_status",
            "confirmation_status must be confirmed, discarded or requires_confirmation",
        )
    })?;
    let domain = crate::access::load(app, caller, domain_id).await?;
    let next = set_status(app, caller, &domain.value, source_id, |s, now| {
        moved(s, status, now)
    })
    .await?;
    Ok(view(&next))
}

/// Changes one sender with `change`, logs it, and reconciles the domain's sender tasks.
pub(crate) async fn set_status(
    app: &AppState,
    caller: &Caller,
    domain: &Domain,
    source_id: Uuid,
    change: impl Fn(&DomainSource, OffsetDateTime) -> DomainSource,
) -> Result<DomainSource, ServiceError> {
    let store = app.store.as_ref();
    let not_found = || ServiceError::not_found("source");
    let mut saved = None;
    for _ in 0..5 {
        let current = stored::get(store, caller.org_id, domain.id, source_id)
            .await?
            .ok_or_else(not_found)?;
        let next = change(&current.value, app.clock.now());
        if next == current.value {
            saved = Some(next);
            break;
        }
        let mut ops = vec![stored::save_op(&next, Some(current.version))?];
        ops.extend(crate::activity::ops(
            app,
            caller,
            crate::activity::Change::new(
                "domain_source.updated",
                "domain_source",
                Some(next.id),
                format!(
                    "{} on {}: {}",
                    next.source_name.clone().unwrap_or_else(|| next.key.clone()),
                    domain.url,
                    next.confirmation_status.as_str()
                ),
            )
            .previous(Some(serde_json::json!({
                "confirmation_status": current.value.confirmation_status.as_str(),
                "ignore_spf": current.value.ignore_spf,
                "ignore_dkim": current.value.ignore_dkim,
            }))),
        )?);
        match store.transact(ops).await {
            Ok(()) => {
                saved = Some(next);
                break;
            }
            Err(e) if e.is_conflict() => continue,
            Err(e) => return Err(e.into()),
        }
    }
    let saved =
        saved.ok_or_else(|| ServiceError::conflict("the sender kept changing; try again"))?;
    let all: Vec<DomainSource> = stored::list(store, caller.org_id, domain.id)
        .await?
        .into_iter()
        .map(|s| s.value)
        .collect();
    let spf = live_spf(app, &domain.url).await;
    reconcile_tasks(app, domain, &all, spf.as_ref()).await?;
    Ok(saved)
}

/// The sender a sender task is about: its problem key ends with the DomainSource id.
pub fn sender_of_task(task: &mailward_tasks::Task) -> Option<Uuid> {
    let rest = task.problem_key.split_once('#')?.1;
    rest.split('#').next()?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spf_holds_ignores_qualifiers_and_case() {
        assert!(spf_holds(
            "v=spf1 include:SendGrid.net ~all",
            "include:sendgrid.net"
        ));
        assert!(spf_holds(
            "v=spf1 +include:x.example -all",
            "include:x.example"
        ));
        assert!(!spf_holds(
            "v=spf1 include:x.example.org -all",
            "include:x.example"
        ));
    }
}
